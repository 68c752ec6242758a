/**
 * A user's environment module in a thread of its own (a module's code never runs on the
 * page, the engine or a Node main thread). `openModuleRunner` spawns the host (a Web Worker, or a Node
 * worker_thread), loads the module there and returns a runner whose calls go to it:
 *
 * - `sample`, `expert`, `chance` are synchronous for the caller (`Environment.generate` is): the call is
 *   posted and the caller blocks on a shared buffer until the host writes the answer. Only threads that
 *   may block use a host (not a page's main thread; `SharedArrayBuffer` needs a cross-origin-isolated
 *   page); elsewhere the module runs in this thread, in QuickJS under the same limits.
 * - tool sessions and `evaluate` are async messages.
 *
 * Every call has a backstop besides the guest's own deadlines: a host that does not answer in time is
 * terminated and the call fails, saying so, instead of holding the engine or the CLI.
 * Rollout workers run modules in their own thread (`runModulesInThisThread`): they are already threads
 * a host can terminate, and a host per worker would double the threads.
 */
import type { Task } from '../contracts.ts';
import type { RngState } from '../rng.ts';
import { GuestModuleError } from '../sandbox/guest-module.ts';
import { spawnThread, type HostThread as SpawnedThread, type ThreadListener } from '../sandbox/spawn-thread.ts';
import {
  errorFrom,
  FLAG,
  HEADER_BYTES,
  LENGTH,
  SHARED_BYTES,
  STATUS,
  type AsyncOp,
  type FromHost,
  type SyncOp,
  type ToHost,
} from './module-host-protocol.ts';
import {
  LocalModuleRunner,
  type ModuleInfo,
  type ModuleRunner,
  type ModuleRunnerOptions,
  type ToolCallRecord,
  type ToolOutcome,
  type ToolSession,
} from './module-runner.ts';

type HostThread = SpawnedThread<ToHost>;
type Listener = ThreadListener<FromHost>;

let hereOnly = false;

/** Runs every module loaded from now on in this thread (a rollout worker's entry calls this). */
export function runModulesInThisThread(): void {
  hereOnly = true;
}

/** Whether this thread can use a host: it may block on shared memory (not a page's main thread). */
function canUseModuleHost(): boolean {
  if (hereOnly || typeof SharedArrayBuffer === 'undefined' || typeof Atomics?.wait !== 'function') return false;
  try {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 1, 0);
    return true;
  } catch {
    return false;
  }
}

/** A runner for `source`: in a host thread where asked and this thread can use one, else here. */
export async function openModuleRunner(
  source: string,
  options: ModuleRunnerOptions,
  thread: 'host' | 'here' = 'host',
): Promise<ModuleRunner> {
  if (thread === 'here' || !canUseModuleHost()) return LocalModuleRunner.open(source, options);
  return HostedModuleRunner.open(source, options);
}

/** Extra time a host gets beyond the guest's deadlines before it is called hung: start-up, queued calls. */
const HOST_GRACE_MS = 20_000;

class HostedModuleRunner implements ModuleRunner {
  private readonly header: Int32Array;
  private readonly data: Uint8Array;
  private readonly pending = new Map<
    number,
    { resolve(v: unknown): void; reject(e: Error): void; timer: ReturnType<typeof setTimeout> }
  >();
  private nextId = 1;
  private dead: string | null = null;
  readonly hosted = true;
  info!: ModuleInfo;

  private constructor(
    private readonly thread: HostThread,
    shared: SharedArrayBuffer,
    private readonly options: ModuleRunnerOptions,
  ) {
    this.header = new Int32Array(shared, 0, 3);
    this.data = new Uint8Array(shared, HEADER_BYTES);
  }

  static async open(source: string, options: ModuleRunnerOptions): Promise<HostedModuleRunner> {
    const shared = new SharedArrayBuffer(SHARED_BYTES);
    let listener: Listener = { message: () => {}, crash: () => {} };
    const thread = await spawnHost({ message: (m) => listener.message(m), crash: (e) => listener.crash(e) });
    const runner = new HostedModuleRunner(thread, shared, options);
    try {
      runner.info = await new Promise<ModuleInfo>((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new GuestModuleError(
                `loading the module took longer than ${options.timeoutMs + HOST_GRACE_MS} ms; its host thread was stopped`,
                null,
                true,
              ),
            ),
          options.timeoutMs + HOST_GRACE_MS,
        );
        listener = {
          message: (m) => {
            clearTimeout(timer);
            if (m.kind === 'opened') resolve(m.info);
            else if (m.kind === 'failed') reject(errorFrom(m.error));
          },
          crash: (e) => {
            clearTimeout(timer);
            reject(e);
          },
        };
        thread.hold(true);
        thread.post({ kind: 'open', source, options, shared });
      });
    } catch (e) {
      thread.terminate();
      throw e;
    }
    thread.hold(false);
    listener = {
      message: (m) => runner.onMessage(m),
      crash: (e) => runner.stop(`its host thread crashed (${e.message})`),
    };
    return runner;
  }

  sample(rng: RngState, level: number): unknown {
    return this.sync('sample', [rng, level]);
  }

  expert(task: Task): unknown {
    return this.sync('expert', [task]);
  }

  chance(level: number): unknown {
    return this.sync('chance', [level]);
  }

  evaluate(task: Task, trajectory: unknown, calls: ToolCallRecord[]): Promise<unknown> {
    return this.call('evaluate', [task, trajectory, calls], (calls.length + 2) * this.options.timeoutMs);
  }

  async openSession(task: Task, timeoutMs: number): Promise<ToolSession> {
    const id = await this.call('openSession', [task, timeoutMs], timeoutMs);
    return {
      call: (name, args) => this.call('callTool', [id, name, args], timeoutMs) as Promise<ToolOutcome>,
      dispose: () => {
        if (!this.dead) void this.call('closeSession', [id], 0).catch(() => {});
      },
    };
  }

  close(): void {
    this.stop('the environment was closed');
  }

  private sync(op: SyncOp, args: unknown[]): unknown {
    if (this.dead) throw new GuestModuleError(`${op}: the environment module cannot run: ${this.dead}`, null);
    Atomics.store(this.header, FLAG, 0);
    this.thread.post({ kind: 'sync', op, args });
    const limitMs = 4 * this.options.timeoutMs + HOST_GRACE_MS;
    if (Atomics.wait(this.header, FLAG, 0, limitMs) === 'timed-out') {
      this.stop(
        `${op} did not answer within ${limitMs} ms, so its host thread was stopped; load the environment again`,
      );
      throw new GuestModuleError(`${op}: ${this.dead}`, null, true);
    }
    // Copied out first: TextDecoder does not read shared memory in browsers.
    const text = new TextDecoder().decode(this.data.slice(0, Atomics.load(this.header, LENGTH)));
    if (Atomics.load(this.header, STATUS) === 0) return (JSON.parse(text) as { value: unknown }).value;
    throw errorFrom(JSON.parse(text));
  }

  private call(op: AsyncOp, args: unknown[], guestMs: number): Promise<unknown> {
    if (this.dead)
      return Promise.reject(new GuestModuleError(`${op}: the environment module cannot run: ${this.dead}`, null));
    const id = this.nextId++;
    const limitMs = guestMs + HOST_GRACE_MS;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.stop(
          `a ${op} call did not answer within ${limitMs} ms, so its host thread was stopped; load the environment again`,
        );
      }, limitMs);
      this.pending.set(id, { resolve, reject, timer });
      this.thread.hold(true);
      this.thread.post({ kind: 'call', id, op, args });
    });
  }

  private onMessage(m: FromHost): void {
    if (m.kind !== 'reply') return;
    const waiting = this.pending.get(m.id);
    if (!waiting) return;
    this.pending.delete(m.id);
    clearTimeout(waiting.timer);
    if (this.pending.size === 0) this.thread.hold(false);
    if (m.ok) waiting.resolve(m.value);
    else waiting.reject(errorFrom(m.error));
  }

  /** Ends the host; every pending call fails with `reason`. */
  private stop(reason: string): void {
    if (this.dead) return;
    this.dead = reason;
    this.thread.terminate();
    for (const { reject, timer } of this.pending.values()) {
      clearTimeout(timer);
      reject(new GuestModuleError(`the environment module cannot run: ${reason}`, null, true));
    }
    this.pending.clear();
  }
}

function spawnHost(listener: Listener): Promise<HostThread> {
  const browser = () =>
    new Worker(new URL('../../workers/module-host.worker.ts', import.meta.url), {
      type: 'module',
      name: 'environment-module',
    });
  return spawnThread<ToHost, FromHost>(browser, 'module-host.node.ts', listener);
}
