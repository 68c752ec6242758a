/**
 * One overall time budget for checking an environment: reading a task file (its verifier's trial
 * included), loading a module, and the audit (rollout/env-audit.ts). Each call of a user's code has a
 * deadline of its own, but a check makes thousands of them (every task drawn, every tool call of every
 * blind episode), so a module whose every call takes just under its deadline would run for hours.
 *
 * The check names its steps as it goes (`step`, which reports each one); once the budget is spent the
 * check stops with a `CheckTimeoutError` naming the step that ran out. It is enforced three ways, so no
 * kind of work escapes it: the environment a check uses is wrapped (`budgetedEnvironment`) so that every
 * call of it (sync ones like `generate` too, which no timer can interrupt) first looks at the clock;
 * `race` ends a step still waiting on one call when the budget runs out (the caller then closes the
 * environment, which stops its module thread); and `signal` is aborted then, for the loops that take one.
 * So a check ends within its budget plus one synchronous call of the module (its own deadline bounds it).
 */
import type { Task, Trajectory } from '../contracts.ts';
import type { Environment, OwnToolSession } from './types.ts';

/** The default budget of a check, in ms: a few times what the audit of the largest built-in takes. */
export const CHECK_BUDGET_MS = 60_000;

export class CheckTimeoutError extends Error {
  constructor(
    readonly step: string,
    readonly budgetMs: number,
  ) {
    super(
      `the check ran out of its ${formatSeconds(budgetMs)} budget during "${step}": the environment's calls (sample, its tools, ` +
        'evaluate, a verifier) are too slow for this many; make them faster, or give the check a larger budget or fewer items',
    );
    this.name = 'CheckTimeoutError';
  }
}

export interface CheckBudgetOptions {
  /** Told each step as it starts. */
  onStep?: (step: string) => void;
  /** Cancels the check (its reason is what the check throws). */
  signal?: AbortSignal;
}

export class CheckBudget {
  private readonly controller = new AbortController();
  private readonly deadline: number;
  private readonly timer: ReturnType<typeof setTimeout>;
  private current = 'starting';

  constructor(
    readonly budgetMs: number = CHECK_BUDGET_MS,
    private readonly options: CheckBudgetOptions = {},
  ) {
    if (!(budgetMs > 0) || !Number.isFinite(budgetMs))
      throw new RangeError(`a check's budget must be a positive number of ms, got ${budgetMs}`);
    this.deadline = performance.now() + budgetMs;
    this.timer = setTimeout(() => this.expire(), budgetMs);
    const outer = options.signal;
    if (outer?.aborted) this.controller.abort(outer.reason);
    else outer?.addEventListener('abort', () => this.controller.abort(outer.reason), { once: true });
  }

  /** Aborted when the budget runs out (the reason a CheckTimeoutError) or the check is cancelled. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Starts a step: reports it, and throws when the budget is already spent. */
  begin(step: string): void {
    this.current = step;
    this.options.onStep?.(step);
    this.check();
  }

  /** Throws the check's end (a CheckTimeoutError, or the cancellation) once there is one. */
  check(): void {
    if (!this.signal.aborted && performance.now() > this.deadline) this.expire();
    this.signal.throwIfAborted();
  }

  /** `work`, unless the budget runs out (or the check is cancelled) first. */
  race<T>(work: Promise<T>): Promise<T> {
    // What `work` does after the check ended is no one's concern: its failure must not go unhandled.
    work.catch(() => {});
    try {
      this.check();
    } catch (e) {
      return Promise.reject(e);
    }
    const signal = this.signal;
    let onAbort = () => {};
    const ended = new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    return Promise.race([work, ended]).finally(() => signal.removeEventListener('abort', onAbort));
  }

  /** Like `race`, for something that must be closed: one that arrives after the check ended is closed then. */
  async open<T extends { close(): void }>(work: Promise<T>): Promise<T> {
    try {
      return await this.race(work);
    } catch (e) {
      void work.then(
        (late) => late.close(),
        () => {},
      );
      throw e;
    }
  }

  /** Frees the timer (the check is over). */
  dispose(): void {
    clearTimeout(this.timer);
  }

  private expire(): void {
    if (!this.signal.aborted) this.controller.abort(new CheckTimeoutError(this.current, this.budgetMs));
  }
}

/** Runs `work` under a fresh budget that is disposed after it, whatever happens. */
export async function withCheckBudget<T>(
  budgetMs: number | undefined,
  options: CheckBudgetOptions,
  work: (budget: CheckBudget) => Promise<T>,
): Promise<T> {
  const budget = new CheckBudget(budgetMs ?? CHECK_BUDGET_MS, options);
  try {
    return await budget.race(work(budget));
  } finally {
    budget.dispose();
  }
}

/** `env` with every call of it under `budget`: each looks at the clock first, each async one ends when the budget does. */
export function budgetedEnvironment(env: Environment, budget: CheckBudget): Environment {
  const wrapped: Environment = {
    ...env,
    generate: (seed, difficulty, split) => (budget.check(), env.generate(seed, difficulty, split)),
    evaluate: (task: Task, trajectory: Trajectory) => budget.race(env.evaluate(task, trajectory)),
    toolbox: (task) => (budget.check(), env.toolbox(task)),
    chance: (difficulty) => (budget.check(), env.chance(difficulty)),
    splitOf: (key) => env.splitOf(key),
  };
  if (env.expert) wrapped.expert = (task) => (budget.check(), env.expert!(task));
  if (env.openTools) {
    wrapped.openTools = async (task, options): Promise<OwnToolSession> => {
      const session = await budget.race(env.openTools!(task, options));
      return { call: (name, args) => budget.race(session.call(name, args)), dispose: () => session.dispose() };
    };
  }
  return wrapped;
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
