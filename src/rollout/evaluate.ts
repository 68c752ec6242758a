/**
 * Held-out evaluation (`spindle eval --split test`): run a policy on generated items of each
 * environment and level, score each episode with the environment's own `evaluate`, and report the
 * success rate (score 1) and the mean score. Greedy sampling by default so a number means one thing.
 *
 * The items are distinct: seeds are drawn in order (`deriveSeed(seed, 'eval', env, level, i)`, i = 0, 1, …)
 * and an item whose `item_key` was already drawn is skipped, until `items` distinct items or
 * `MAX_DRAWS_PER_ITEM × items` draws. A level with fewer distinct items than asked is evaluated on what it
 * has and says so (`distinct < asked`): n, the rate and its interval count each item once.
 */
import { isSuccess, type SamplingParams, type Split, type Task, type Trajectory } from '../contracts.ts';
import type { Environment } from '../envs/types.ts';
import { deriveSeed } from '../rng.ts';
import { DEFAULT_CONFIG, type RunConfig } from '../config/schema.ts';
import { runEpisode } from './episode.ts';
import { formatSuccessCount } from './success-interval.ts';
import type { Policy } from './policy.ts';

/** Draws per asked item before a level is declared smaller than asked. */
const MAX_DRAWS_PER_ITEM = 20;

export interface EvalOptions {
  split?: Split;
  /** Levels per environment; default: the environment's lowest level. */
  levels?: number[];
  items: number;
  seed: number;
  sampling?: Partial<SamplingParams>;
  maxSteps?: number;
  toolTimeoutMs?: number;
  /** Episodes in flight at once (a batching policy turns these into one generation batch). */
  concurrency?: number;
  signal?: AbortSignal;
  onEpisode?: (trajectory: Trajectory, score: number | null) => void;
}

export interface EvalResult {
  env: string;
  level: number;
  split: Split;
  /** Items evaluated: each a distinct item (its own `item_key`), so n === distinct. */
  n: number;
  /** Distinct items found and evaluated (the n intervals are computed on). */
  distinct: number;
  /** Items asked for; above `distinct` when the level's split has fewer distinct items than that. */
  asked: number;
  /** Share of items scored 1. */
  success: number;
  /** Mean score over items that could be scored. */
  mean_score: number;
  /** Items the environment could not score. */
  unscored: number;
}

const GREEDY: SamplingParams = { ...DEFAULT_CONFIG.sampling, temperature: 0 };

/**
 * How a run's config is evaluated, wherever it is (the run's held-out figure, `spindle eval --run`, the
 * benchmarks): greedy, with the run's token and turn budgets, on `tasks.eval_items` distinct items per
 * environment at its fixed level, drawn from the run's seed.
 */
export function evaluationSettings(config: Pick<RunConfig, 'sampling' | 'trajectory_collection' | 'seed' | 'tasks'>): {
  sampling: SamplingParams;
  maxSteps: number;
  toolTimeoutMs: number;
  seed: number;
  items: number;
} {
  const tc = config.trajectory_collection;
  return {
    sampling: { ...config.sampling, temperature: 0 },
    maxSteps: tc.max_steps_per_trajectory,
    toolTimeoutMs: tc.tool_timeout_ms,
    seed: config.seed,
    items: config.tasks.eval_items,
  };
}

/**
 * One level's result from its items' scores, in the order evaluationTasks gave them: success is the share
 * scored full marks (an unscored item is not a success), the mean score is over the scored ones.
 */
export function summarizeLevel(
  env: string,
  level: number,
  split: Split,
  asked: number,
  scores: readonly (number | null)[],
): EvalResult {
  const scored = scores.filter((s): s is number => s !== null);
  return {
    env,
    level,
    split,
    n: scores.length,
    distinct: scores.length,
    asked,
    success: scores.length ? scored.filter((s) => isSuccess(s)).length / scores.length : 0,
    mean_score: scored.length ? scored.reduce((a, b) => a + b, 0) / scored.length : 0,
    unscored: scores.length - scored.length,
  };
}

/**
 * The distinct items an evaluation with (items, seed) runs at one environment and level: seeds in order,
 * repeats of an `item_key` skipped, at most `MAX_DRAWS_PER_ITEM × items` draws. Fewer than `items` when
 * the level's split has fewer distinct items. Every evaluation (a model's, the task-blind policies') uses these.
 */
export function evaluationTasks(
  env: Environment,
  level: number,
  options: { items: number; seed: number; split?: Split },
): Task[] {
  const split = options.split ?? 'test';
  const seen = new Set<string>();
  const tasks: Task[] = [];
  const draws = MAX_DRAWS_PER_ITEM * options.items;
  for (let i = 0; i < draws && tasks.length < options.items; i++) {
    const task = env.generate(deriveSeed(options.seed, 'eval', env.name, level, i), level, split);
    const key = String(task.data.item_key ?? task.prompt);
    if (seen.has(key)) continue;
    seen.add(key);
    tasks.push(task);
  }
  return tasks;
}

/** "only 7 distinct" when a level had fewer distinct items than asked, else '': what a table or log prints beside n. */
export function distinctNote(r: Pick<EvalResult, 'distinct' | 'asked'>): string {
  return r.distinct < r.asked ? `only ${r.distinct} distinct` : '';
}

/** The levels an evaluation runs for an environment, each once. */
const levelsOf = (env: Environment, options: EvalOptions): number[] => [
  ...new Set((options.levels ?? [env.difficulties[0]]).filter((l) => env.difficulties.includes(l))),
];

export async function evaluatePolicy(policy: Policy, envs: Environment[], options: EvalOptions): Promise<EvalResult[]> {
  const split = options.split ?? 'test';
  const sampling = { ...GREEDY, ...options.sampling };
  const jobs = envs.flatMap((env) =>
    levelsOf(env, options).flatMap((level) =>
      evaluationTasks(env, level, { items: options.items, seed: options.seed, split }).map((task) => ({
        env,
        level,
        task,
      })),
    ),
  );
  const scores: (number | null)[] = new Array(jobs.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const index = next++;
      const { env, task } = jobs[index];
      const trajectory = await runEpisode({
        policy,
        env,
        task,
        seed: task.seed,
        sampling,
        maxSteps: options.maxSteps,
        toolTimeoutMs: options.toolTimeoutMs,
        signal: options.signal,
      });
      const score = await env.evaluate(task, trajectory);
      scores[index] = score;
      options.onEpisode?.({ ...trajectory, judge_score: score, success: isSuccess(score) }, score);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency ?? 1, jobs.length)) }, worker));

  const results: EvalResult[] = [];
  for (const env of envs) {
    for (const level of levelsOf(env, options)) {
      const mine = jobs
        .map((j, i) => ({ j, s: scores[i] }))
        .filter(({ j }) => j.env === env && j.level === level)
        .map(({ s }) => s);
      results.push(summarizeLevel(env.name, level, split, options.items, mine));
    }
  }
  return results;
}

/**
 * The results as a Markdown table: every success as its count with its Wilson 95% interval on the distinct
 * items ("17/32 = 53% [36, 69]", and "(only N distinct)" where a level had fewer distinct items than asked)
 * and, when given (keyed `env/level`), the best task-blind policy's success on the same items.
 */
export function formatEvalTable(
  results: EvalResult[],
  blind?: ReadonlyMap<string, { task: number; part: number | null }>,
): string {
  const pct = (x: number | null | undefined) => (x === null || x === undefined ? '—' : `${(100 * x).toFixed(1)}%`);
  const rows = results.map((r) => {
    const success = formatSuccessCount(Math.round(r.success * r.n), r.n);
    const baseline = blind?.get(`${r.env}/${r.level}`);
    const only = distinctNote(r) ? ` (${distinctNote(r)})` : '';
    return `| ${r.env} | ${r.level} | ${r.split} | ${success}${only} |${blind ? ` ${pct(baseline?.task)} | ${pct(baseline?.part)} |` : ''} ${r.mean_score.toFixed(3)} |`;
  });
  const head = `| environment | level | split | success [95% interval] |${blind ? ' best task-blind | best part-blind |' : ''} mean score |`;
  return [head, head.replace(/[^|]+/g, '---'), ...rows].join('\n');
}
