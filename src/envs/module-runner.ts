/**
 * What runs a user's environment module (module-env.ts): its load, `sample`, `expert`, `chance`, the
 * tool sessions of episodes and `evaluate`, all in QuickJS (sandbox/guest-module.ts). Two runners
 * offer the same calls:
 *
 * - `LocalModuleRunner`: the QuickJS contexts live in this thread. Used where this thread is one a
 *   host can terminate (a rollout worker, the module host's own thread) or where no other is possible.
 * - the module host (module-host.ts): the same runner in a thread of its own, so a module's code never
 *   runs on the page, the engine or a Node main thread. Its sync calls block on shared memory.
 *
 * Values cross as JSON: tasks, levels, rng states (a task is drawn from `createRng(state)`, so the
 * thread that runs `sample` draws exactly what the caller's generator would have).
 */
import type { Task } from '../contracts.ts';
import { createRng, type Rng, type RngState } from '../rng.ts';
import { GuestModule, GuestModuleError, STATE } from '../sandbox/guest-module.ts';

export interface ModuleRunnerOptions {
  /** The file name errors and stack lines use. */
  fileName: string;
  /** Deadline for loading, `sample`, `expert`, `chance` and `evaluate`, in ms of guest running time. */
  timeoutMs: number;
  /** Heap limit of each context, in bytes. */
  memoryBytes: number;
}

/** What the module exports, read once at load: JSON, functions as "[function]". */
export interface ModuleInfo {
  /** ['default'] when the module has a default export, else [] (its named exports). */
  root: string[];
  meta: unknown;
  /** Which of sample, evaluate, expert, chance, init and tools.NAME.run are functions. */
  functions: string[];
}

/** One own tool call as the model made it, for `evaluate`'s replay. */
export interface ToolCallRecord {
  name: string;
  args: Record<string, unknown>;
}

export interface ToolOutcome {
  result: string;
  error: string | null;
}

export interface ToolSession {
  call(name: string, args: Record<string, unknown>): Promise<ToolOutcome>;
  dispose(): void;
}

export interface ModuleRunner {
  readonly info: ModuleInfo;
  /** True when the module runs in a host thread of its own. */
  readonly hosted: boolean;
  sample(rng: RngState, level: number): unknown;
  expert(task: Task): unknown;
  chance(level: number): unknown;
  /** Replays `calls` on a fresh state, then calls `evaluate(task, trajectory, state)`. */
  evaluate(task: Task, trajectory: unknown, calls: ToolCallRecord[]): Promise<unknown>;
  openSession(task: Task, timeoutMs: number): Promise<ToolSession>;
  close(): void;
}

/** A module's QuickJS contexts in this thread. */
export class LocalModuleRunner implements ModuleRunner {
  readonly hosted = false;
  private constructor(
    private readonly source: string,
    private readonly options: ModuleRunnerOptions,
    private readonly sampler: GuestModule,
    readonly info: ModuleInfo,
  ) {}

  /** Loads the module; throws GuestModuleError (with the line) when loading fails. */
  static async open(source: string, options: ModuleRunnerOptions): Promise<LocalModuleRunner> {
    const sampler = await openGuest(source, options);
    try {
      const root = sampler.exists(['default']) ? ['default'] : [];
      const meta = sampler.describe(root);
      const toolNames = isObject(meta) && isObject(meta.tools) ? Object.keys(meta.tools) : [];
      const candidates = ['sample', 'evaluate', 'expert', 'chance', 'init', ...toolNames.map((n) => `tools.${n}.run`)];
      const functions = candidates.filter((name) => sampler.hasFunction([...root, ...name.split('.')]));
      return new LocalModuleRunner(source, options, sampler, { root, meta, functions });
    } catch (e) {
      sampler.dispose();
      throw e;
    }
  }

  sample(rng: RngState, level: number): unknown {
    return this.sampler.call(this.path('sample'), [rngForGuest(createRng(rng)), level]);
  }

  expert(task: Task): unknown {
    return this.sampler.call(this.path('expert'), [task]);
  }

  chance(level: number): unknown {
    return this.sampler.call(this.path('chance'), [level]);
  }

  async evaluate(task: Task, trajectory: unknown, calls: ToolCallRecord[]): Promise<unknown> {
    const guest = await this.openState(task, this.options.timeoutMs);
    try {
      for (const call of calls) this.runTool(guest, task, call.name, call.args, this.options.timeoutMs);
      return guest.call(this.path('evaluate'), [task, trajectory, STATE]);
    } finally {
      guest.dispose();
    }
  }

  async openSession(task: Task, timeoutMs: number): Promise<ToolSession> {
    const guest = await this.openState(task, timeoutMs);
    return {
      call: async (name, args) => this.runTool(guest, task, name, args, timeoutMs),
      dispose: () => guest.dispose(),
    };
  }

  close(): void {
    this.sampler.dispose();
  }

  private path(name: string): string[] {
    return [...this.info.root, ...name.split('.')];
  }

  /** A fresh context whose kept state is `init(task)` (or `{}`): one per episode, one per evaluation. */
  private async openState(task: Task, timeoutMs: number): Promise<GuestModule> {
    const guest = await openGuest(this.source, this.options);
    try {
      if (this.info.functions.includes('init')) guest.keep(this.path('init'), [task], timeoutMs);
      else guest.keepValue({});
    } catch (e) {
      guest.dispose();
      throw e;
    }
    return guest;
  }

  private runTool(
    guest: GuestModule,
    task: Task,
    name: string,
    args: Record<string, unknown>,
    timeoutMs: number,
  ): ToolOutcome {
    try {
      const value = guest.call(this.path(`tools.${name}.run`), [args, STATE, task], timeoutMs);
      return {
        result: value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value),
        error: null,
      };
    } catch (e) {
      // What the tool threw is what the model reads: a retry learns from it.
      return { result: '', error: e instanceof GuestModuleError ? e.detail.replace(/^Error: /, '') : String(e) };
    }
  }
}

/**
 * Math.random in every context of a module throws, naming what to use: a task drawn from it would differ
 * between two draws of the same seed (the audit, a rollout worker and a resumed run would each see another
 * task), and a tool using it would answer a replayed episode differently than the episode it scores.
 */
const NO_MATH_RANDOM = `Math.random = function random() {
  throw new Error('Math.random is not available in an environment module: the same seed must give the same task everywhere, and a ' +
    'replayed episode the same tool results. Draw in sample(rng, level) from its rng argument (rng.next(), rng.int(lo, hi), ' +
    'rng.pick(items), rng.shuffle(items), rng.chance(p)) and keep what the tools need in the task data.');
};`;

function openGuest(source: string, o: ModuleRunnerOptions): Promise<GuestModule> {
  return GuestModule.open(source, {
    fileName: o.fileName,
    timeoutMs: o.timeoutMs,
    memoryBytes: o.memoryBytes,
    prelude: NO_MATH_RANDOM,
  });
}

/** The rng a module's `sample` draws from: a generator resumed from the caller's state. */
function rngForGuest(rng: Rng): Record<string, (...args: unknown[]) => unknown> {
  return {
    next: () => rng.next(),
    int: (lo, hi) => rng.int(Number(lo), Number(hi)),
    pick: (items) => rng.pick(items as unknown[]),
    shuffle: (items) => rng.shuffle(items as unknown[]),
    chance: (p) => rng.chance(Number(p)),
  };
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
