/**
 * runJs in a thread of its own, under a watchdog. QuickJS polls its interrupt handler only between
 * bytecodes, so one built-in that runs long (a BigInt's toString near QuickJS's size cap, a generic
 * array method over an array-like of length 2**53) cannot be stopped from inside the thread that runs
 * it. `runJsIsolated` hands each call to a sandbox thread (a Web Worker, or a Node worker_thread) that
 * runs runJs there; a call that has not answered `watchdogMs(deadline)` after it was handed over
 * terminates that thread and comes back as a named timeout, and the next call starts a fresh thread.
 *
 * The watchdog is later than everything runJs stops by itself (the deadline, and its wall-clock
 * backstop of WALL_FACTOR × the deadline, guest-clock.ts), so on a thread that makes progress it only
 * ever stops a built-in that does not end. Calls go to the thread one at a time, each watched from the
 * moment it is handed over, so a call never pays for the one before it. The watchdog reads wall time on
 * the caller's thread: when that thread was busy as the watchdog came due (it fired late), an answer
 * may be queued behind it, so it looks once more shortly after instead of stopping the sandbox.
 *
 * Host functions cannot cross threads: a call that passes `globals` uses runJs, in its own thread.
 */
import { WALL_FACTOR } from './guest-clock.ts';
import type { FromSandbox, ToSandbox } from './js-thread-serve.ts';
import { failedRun, resolveRunOptions, type RunJsOptions, type RunJsResult } from './quickjs.ts';
import { spawnThread, type HostThread } from './spawn-thread.ts';

export type IsolatedRunOptions = Omit<RunJsOptions, 'globals'>;

/** Time after the wall-clock backstop for the sandbox thread to format and send a result it stopped by itself. */
const WATCHDOG_GRACE_MS = 2000;

/** When a call with this deadline is stopped from outside at the latest, in ms of wall time after it was handed over. */
export function watchdogMs(timeoutMs: number): number {
  return WALL_FACTOR * timeoutMs + WATCHDOG_GRACE_MS;
}

/** A watchdog that fires this much later than due found its own thread busy. */
const LATE_MS = 100;
/** Start-up of a fresh thread (Node boots TypeScript, QuickJS loads) is no call's time, but it is bounded. */
const START_LIMIT_MS = 60_000;

class SandboxThread {
  private waiting: { id: number; done(result: RunJsResult): void } | null = null;
  private nextId = 1;
  /** Why this thread can no longer run calls, once it cannot. */
  dead: string | null = null;

  private constructor(private readonly thread: HostThread<ToSandbox>) {}

  static async start(): Promise<SandboxThread> {
    let onReady: () => void = () => {};
    let onStartCrash: (e: Error) => void = () => {};
    let sandbox: SandboxThread | null = null;
    const browser = () =>
      new Worker(new URL('../../workers/js-sandbox.worker.ts', import.meta.url), {
        type: 'module',
        name: 'js-sandbox',
      });
    const thread = await spawnThread<ToSandbox, FromSandbox>(browser, 'js-sandbox.node.ts', {
      message: (m) => (m.kind === 'ready' ? onReady() : sandbox?.answer(m.id, m.result)),
      crash: (e) => (sandbox ? sandbox.crashed(e) : onStartCrash(e)),
    });
    thread.hold(true);
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`it did not start within ${START_LIMIT_MS} ms`)),
          START_LIMIT_MS,
        );
        onReady = () => (clearTimeout(timer), resolve());
        onStartCrash = (e) => (clearTimeout(timer), reject(e));
      });
    } catch (e) {
      thread.terminate();
      throw e;
    } finally {
      thread.hold(false);
    }
    sandbox = new SandboxThread(thread);
    return sandbox;
  }

  run(code: string, options: IsolatedRunOptions, timeoutMs: number): Promise<RunJsResult> {
    const id = this.nextId++;
    const limitMs = watchdogMs(timeoutMs);
    return new Promise((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      let due = performance.now() + limitMs;
      const check = () => {
        const now = performance.now();
        if (now - due > LATE_MS) {
          due = now + LATE_MS;
          timer = setTimeout(check, LATE_MS);
          return;
        }
        this.end(`a call ran past its watchdog`);
        resolve(
          failedRun(
            `timeout: stopped after ${limitMs} ms of wall time (one built-in ran past the ${timeoutMs} ms deadline ` +
              'without reaching an interrupt check, so its sandbox thread was stopped)',
            { timedOut: true },
          ),
        );
      };
      this.waiting = {
        id,
        done: (result) => {
          clearTimeout(timer);
          this.waiting = null;
          this.thread.hold(false);
          resolve(result);
        },
      };
      timer = setTimeout(check, limitMs);
      this.thread.hold(true);
      this.thread.post({ kind: 'run', id, code, options });
    });
  }

  private answer(id: number, result: RunJsResult): void {
    if (this.waiting?.id === id) this.waiting.done(result);
  }

  private crashed(e: Error): void {
    const waiting = this.waiting;
    this.end(e.message);
    waiting?.done(
      failedRun(`sandbox failure: the js sandbox thread failed (${e.message}); the next call starts a new one`),
    );
  }

  /** Terminates the thread; a call still waiting is the caller's to answer. */
  private end(reason: string): void {
    if (this.dead) return;
    this.dead = reason;
    this.waiting = null;
    this.thread.terminate();
  }
}

let live: SandboxThread | null = null;
let queue: Promise<unknown> = Promise.resolve();

async function sandboxThread(): Promise<SandboxThread> {
  if (!live || live.dead) {
    live = null;
    live = await SandboxThread.start();
  }
  return live;
}

async function runOnThread(code: string, options: IsolatedRunOptions, timeoutMs: number): Promise<RunJsResult> {
  let thread: SandboxThread;
  try {
    thread = await sandboxThread();
  } catch (e) {
    return failedRun(
      `sandbox failure: the js sandbox thread could not start (${e instanceof Error ? e.message : String(e)})`,
    );
  }
  return thread.run(code, options, timeoutMs);
}

/**
 * Like runJs (same options but `globals`, same result), in the sandbox thread under the watchdog: every
 * call comes back, a built-in that does not end as a timeout within `watchdogMs(timeoutMs)` of wall time.
 */
export async function runJsIsolated(code: string, options: IsolatedRunOptions = {}): Promise<RunJsResult> {
  const { timeoutMs } = resolveRunOptions(options);
  const turn = queue.then(() => runOnThread(code, options, timeoutMs));
  queue = turn; // never rejects
  return turn;
}
