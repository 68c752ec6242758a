/**
 * Held-out evaluation (the seed's `hermes_eval --split test`): run a policy on generated items of each
 * environment and level, score each episode with the environment's own `evaluate`, and report the
 * success rate (score 1) and the mean score. Greedy sampling by default so a number means one thing.
 */
import { isSuccess, type SamplingParams, type Split, type Trajectory } from '../contracts.ts';
import type { Environment } from '../envs/types.ts';
import { deriveSeed } from '../rng.ts';
import { DEFAULT_CONFIG } from '../config/schema.ts';
import { runEpisode } from './episode.ts';
import { wilsonInterval } from './success-interval.ts';
import type { Policy } from './policy.ts';

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
  n: number;
  /** Share of items scored 1. */
  success: number;
  /** Mean score over items that could be scored. */
  mean_score: number;
  /** Items the environment could not score. */
  unscored: number;
}

const GREEDY: SamplingParams = { ...DEFAULT_CONFIG.sampling, temperature: 0 };

export async function evaluatePolicy(policy: Policy, envs: Environment[], options: EvalOptions): Promise<EvalResult[]> {
  const split = options.split ?? 'test';
  const sampling = { ...GREEDY, ...options.sampling };
  const jobs = envs.flatMap((env) =>
    (options.levels ?? [env.difficulties[0]]).filter((l) => env.difficulties.includes(l)).flatMap((level) =>
      Array.from({ length: options.items }, (_, i) => ({ env, level, task: env.generate(deriveSeed(options.seed, 'eval', env.name, level, i), level, split) })),
    ),
  );
  const scores: (number | null)[] = new Array(jobs.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const index = next++;
      const { env, task } = jobs[index];
      const trajectory = await runEpisode({ policy, env, task, seed: task.seed, sampling, maxSteps: options.maxSteps, toolTimeoutMs: options.toolTimeoutMs, signal: options.signal });
      const score = await env.evaluate(task, trajectory);
      scores[index] = score;
      options.onEpisode?.({ ...trajectory, judge_score: score, success: isSuccess(score) }, score);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency ?? 1, jobs.length)) }, worker));

  const results: EvalResult[] = [];
  for (const env of envs) {
    for (const level of new Set(jobs.filter((j) => j.env === env).map((j) => j.level))) {
      const mine = jobs.map((j, i) => ({ j, s: scores[i] })).filter(({ j }) => j.env === env && j.level === level).map(({ s }) => s);
      const scored = mine.filter((s): s is number => s !== null);
      results.push({
        env: env.name,
        level,
        split,
        n: mine.length,
        success: scored.filter((s) => isSuccess(s)).length / mine.length,
        mean_score: scored.length ? scored.reduce((a, b) => a + b, 0) / scored.length : 0,
        unscored: mine.length - scored.length,
      });
    }
  }
  return results;
}

/**
 * The results as a Markdown table: every success rate with its count, its Wilson 95% interval and,
 * when given (keyed `env/level`), the best task-blind policy's success on the same items.
 */
export function formatEvalTable(results: EvalResult[], blind?: ReadonlyMap<string, number>): string {
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const rows = results.map((r) => {
    const k = Math.round(r.success * r.n);
    const [lo, hi] = wilsonInterval(k, r.n);
    const baseline = blind?.get(`${r.env}/${r.level}`);
    return `| ${r.env} | ${r.level} | ${r.split} | ${k}/${r.n} = ${pct(r.success)} | ${pct(lo)}–${pct(hi)} |${blind ? ` ${baseline === undefined ? '—' : pct(baseline)} |` : ''} ${r.mean_score.toFixed(3)} |`;
  });
  const head = `| environment | level | split | success | 95% interval |${blind ? ' best task-blind |' : ''} mean score |`;
  return [head, head.replace(/[^|]+/g, '---'), ...rows].join('\n');
}
