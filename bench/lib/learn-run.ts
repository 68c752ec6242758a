/**
 * What the learning benchmarks share (bench/learn.bench.ts, bench/credit.bench.ts): a greedy held-out
 * evaluation that also counts how the policy acts (tool use, calls per episode, recovery after a failed
 * call), and one GRPO run from a loaded model through the real pipeline (rollout workers, rule judge,
 * trainer) for an update or time budget.
 */
import 'fake-indexeddb/auto';
import { getEnvironment } from '../../src/envs/registry.ts';
import { changedNothing } from '../../src/envs/task-toolbox.ts';
import { createNodeRun } from '../../src/pipeline/platform/node.ts';
import { EnginePolicy, GenerationService } from '../../src/pipeline/engine/generation.ts';
import { evaluatePolicy, type EvalResult } from '../../src/rollout/evaluate.ts';
import { agentStats, type AgentStats } from '../../src/rollout/agent-stats.ts';
import { wilsonInterval } from '../../src/rollout/success-interval.ts';
import { openStore } from '../../src/store/index.ts';
import type { RunConfig } from '../../src/config/schema.ts';
import type { RunEvent } from '../../src/pipeline/operations/events.ts';
import type { Metrics, Trajectory } from '../../src/contracts.ts';
import type { TransformerModel } from '../../src/model/transformer.ts';
import type { TextTokenizer } from '../../src/tokenizer/tokenizer.ts';

export interface Loaded {
  model: TransformerModel;
  tokenizer: TextTokenizer;
}

/** Turns an episode may take in the held-out evaluation and in training: a level-1 multi-step item with its retry and answer fits. */
export const BENCH_MAX_STEPS = 8;
/** The evaluation items: item i of an environment is generated from (EVAL_SEED, i), before and after alike. */
export const EVAL_SEED = 2024;

export interface HeldOut {
  result: EvalResult;
  success: number;
  ci95: [number, number];
  /** The share of episodes that called one of the environment's tools, and the success among those. */
  tool_use: { called: number; success_when_called: number };
  agent: AgentStats;
  /** The evaluated episodes, in the order they finished (each with its score as judge_score). */
  episodes: Trajectory[];
}

export const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
export const showRate = (r: { success: number; ci95: [number, number] }): string =>
  `${pct(r.success)} [${pct(r.ci95[0])}, ${pct(r.ci95[1])}]`;

/**
 * Greedy held-out success of a loaded model on one environment and level, with how it acted. `turns`
 * (default BENCH_MAX_STEPS) and `maxNewTokens` (default the config's) bound each episode.
 */
export async function heldOut(
  loaded: Loaded,
  id: string,
  envName: string,
  level: number,
  items: number,
  bounds: { turns?: number; maxNewTokens?: number } = {},
): Promise<HeldOut> {
  const env = getEnvironment(envName);
  const policy = new EnginePolicy(id, loaded.tokenizer, new GenerationService(() => loaded.model, loaded.tokenizer));
  const episodes: Trajectory[] = [];
  const onEpisode = (t: Trajectory) => episodes.push(t);
  const sampling = bounds.maxNewTokens === undefined ? undefined : { max_new_tokens: bounds.maxNewTokens };
  const [result] = await evaluatePolicy(policy, [env], {
    items,
    seed: EVAL_SEED,
    levels: [level],
    concurrency: 16,
    maxSteps: bounds.turns ?? BENCH_MAX_STEPS,
    toolTimeoutMs: 15_000,
    sampling,
    onEpisode,
  });
  const called = episodes.filter((t) => !changedNothing(t, env.requiredTools));
  const k = Math.round(result.success * result.n);
  return {
    result,
    success: result.success,
    ci95: wilsonInterval(k, result.n),
    tool_use: {
      called: called.length / episodes.length,
      success_when_called: called.length === 0 ? 0 : called.filter((t) => t.success === true).length / called.length,
    },
    agent: agentStats(episodes),
    episodes,
  };
}

export interface UpdatePoint {
  step: number;
  metrics: Metrics;
  seconds: number;
}

/**
 * Trains `loaded` in place (its LoRA) with GRPO under `config` until `maxUpdates` updates or `budgetMs`
 * have passed, whichever comes first. Throws when the run fails: an "after" figure would measure the failure.
 */
export async function trainGrpo(
  loaded: Loaded,
  config: RunConfig,
  limits: {
    maxUpdates: number;
    budgetMs: number;
    onUpdate?: (p: UpdatePoint) => void;
    onEvent?: (event: RunEvent) => void;
  },
): Promise<{ curve: UpdatePoint[]; seconds: number }> {
  const store = await openStore({ factory: new IDBFactory() });
  const run = createNodeRun({ store, cores: 2, loadModel: async () => loaded });
  const curve: UpdatePoint[] = [];
  const started = performance.now();
  let fatal: string | null = null;
  run.subscribe((event: RunEvent) => {
    limits.onEvent?.(event);
    if (event.type === 'update') {
      const point = { step: event.step, metrics: event.metrics, seconds: (performance.now() - started) / 1000 };
      curve.push(point);
      limits.onUpdate?.(point);
      if (point.seconds * 1000 > limits.budgetMs || curve.length >= limits.maxUpdates) void run.stop();
    }
    if (event.type === 'error') console.log(`${event.fatal ? 'FATAL' : 'warning'}: ${event.message}`);
    if (event.type === 'error' && event.fatal) fatal = event.message;
  });
  await run.start(config);
  await run.done();
  store.db.close();
  if (fatal) throw new Error(`the GRPO run failed (${fatal}); SPINDLE_DEBUG=1 prints the error's stack`);
  return { curve, seconds: (performance.now() - started) / 1000 };
}
