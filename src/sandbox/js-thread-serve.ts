/**
 * The sandbox thread's side (workers/js-sandbox.*.ts): runs each `run` message through runJs in this
 * thread, one at a time, and answers with its result. js-thread.ts is the caller's side and its watchdog.
 */
import { failedRun, loadQuickJS, runJs, type RunJsOptions, type RunJsResult } from './quickjs.ts';

export type ToSandbox = { kind: 'run'; id: number; code: string; options: Omit<RunJsOptions, 'globals'> };
/** `ready` once the QuickJS module is loaded: a call's watchdog starts after it, not during start-up. */
export type FromSandbox = { kind: 'ready' } | { kind: 'result'; id: number; result: RunJsResult };

export interface SandboxPort {
  post(message: FromSandbox): void;
  onMessage(listener: (message: ToSandbox) => void): void;
}

export function serveJsSandbox(port: SandboxPort): void {
  let queue: Promise<unknown> = Promise.resolve();
  port.onMessage((message) => {
    queue = queue.then(async () => {
      const result = await runJs(message.code, message.options).catch((e: unknown) =>
        failedRun(`sandbox failure: ${e instanceof Error ? e.message : String(e)}`),
      );
      port.post({ kind: 'result', id: message.id, result });
      // A module that grew was dropped after the call: the next one is loaded now, while this thread is idle.
      await loadQuickJS().catch(() => {});
    });
  });
  void loadQuickJS()
    .catch(() => {}) // a load that failed is retried by the first call, which reports it
    .then(() => port.post({ kind: 'ready' }));
}
