/**
 * The module host's side (workers/module-host.*.ts): one LocalModuleRunner in this thread, answering
 * the messages of module-host-protocol.ts. Sync answers go into the shared buffer, then wake the
 * caller; async ones are replies. Calls run one at a time, in the order they came.
 */
import type { Task } from '../contracts.ts';
import type { RngState } from '../rng.ts';
import { errorData, FLAG, HEADER_BYTES, LENGTH, STATUS, type FromHost, type ToHost } from './module-host-protocol.ts';
import { LocalModuleRunner, type ToolCallRecord, type ToolSession } from './module-runner.ts';

export interface HostPort {
  post(message: FromHost): void;
  onMessage(listener: (message: ToHost) => void): void;
}

export function serveModuleHost(port: HostPort): void {
  let runner: LocalModuleRunner | null = null;
  let header: Int32Array | null = null;
  let data: Uint8Array | null = null;
  const sessions = new Map<number, ToolSession>();
  let nextSession = 1;

  const answerSync = (status: 0 | 1, value: unknown) => {
    let bytes = new TextEncoder().encode(JSON.stringify(status === 0 ? { value } : value));
    if (bytes.length > data!.length) {
      status = 1;
      bytes = new TextEncoder().encode(
        JSON.stringify(
          errorData(
            new Error(
              `the result is ${bytes.length} bytes of JSON, above the ${data!.length} a module call may return`,
            ),
          ),
        ),
      );
    }
    data!.set(bytes); // encoded apart, then copied: encoders do not write into shared memory everywhere
    Atomics.store(header!, STATUS, status);
    Atomics.store(header!, LENGTH, bytes.length);
    Atomics.store(header!, FLAG, 1);
    Atomics.notify(header!, FLAG);
  };

  const runAsync = async (op: string, args: unknown[]): Promise<unknown> => {
    switch (op) {
      case 'evaluate':
        return runner!.evaluate(args[0] as Task, args[1], args[2] as ToolCallRecord[]);
      case 'openSession': {
        const id = nextSession++;
        sessions.set(id, await runner!.openSession(args[0] as Task, args[1] as number));
        return id;
      }
      case 'callTool': {
        const session = sessions.get(args[0] as number);
        if (!session) throw new Error('this tool session was closed');
        return session.call(args[1] as string, args[2] as Record<string, unknown>);
      }
      case 'closeSession':
        sessions.get(args[0] as number)?.dispose();
        sessions.delete(args[0] as number);
        return null;
      default:
        throw new Error(`unknown module host call ${op}`);
    }
  };

  // One call at a time: a later call waits for the one before (QuickJS contexts are not re-entrant).
  let queue: Promise<unknown> = Promise.resolve();
  port.onMessage((message) => {
    queue = queue.then(async () => {
      if (message.kind === 'open') {
        header = new Int32Array(message.shared, 0, 3);
        data = new Uint8Array(message.shared, HEADER_BYTES);
        try {
          runner = await LocalModuleRunner.open(message.source, message.options);
          port.post({ kind: 'opened', info: runner.info });
        } catch (e) {
          port.post({ kind: 'failed', error: errorData(e) });
        }
      } else if (message.kind === 'sync') {
        try {
          const [a] = message.args;
          const value =
            message.op === 'sample'
              ? runner!.sample(a as RngState, message.args[1] as number)
              : message.op === 'expert'
                ? runner!.expert(a as Task)
                : runner!.chance(a as number);
          answerSync(0, value);
        } catch (e) {
          answerSync(1, errorData(e));
        }
      } else {
        try {
          port.post({ kind: 'reply', id: message.id, ok: true, value: await runAsync(message.op, message.args) });
        } catch (e) {
          port.post({ kind: 'reply', id: message.id, ok: false, error: errorData(e) });
        }
      }
    });
  });
}
