/**
 * Evaluating a model outside a run (`spindle eval`), an operation the CLI
 * calls. Two plans, one evaluation (rollout/evaluate.ts, the one a run's held-out figure uses):
 * - `runEvaluationPlan`: a stored run's latest checkpoint exactly as the run evaluates itself
 *   (evaluationSettings: its environments at their fixed levels, its eval_items and seed, greedy with its
 *   budgets), so the figure equals the run's last held-out one item by item;
 * - `modelEvaluationPlan`: a model (plus an optional adapter zip) on the environments named.
 * `evaluateModel` runs a plan on a loaded model and puts the best task-blind and part-blind policies' rates beside each.
 */
import type { RunConfig } from '../../config/schema.ts';
import { fixedLevel } from '../../config/levels.ts';
import { isSuccess, type SamplingParams, type Split } from '../../contracts.ts';
import { getEnvironment } from '../../envs/registry.ts';
import type { Environment } from '../../envs/types.ts';
import { bestBlindByKind } from '../../rollout/blind-policies.ts';
import { evaluatePolicy, evaluationSettings, formatEvalTable, type EvalResult } from '../../rollout/evaluate.ts';
import { LocalPolicy } from '../../rollout/local-policy.ts';
import { loadLatestCheckpoint } from '../../store/index.ts';
import { checkpointAdapter } from './adapter-export.ts';
import { installRunEnvironments } from '../platform/node-environments.ts';
import { attachAdapterTensors, attachAdapterZip, type NodeModel } from '../platform/node-model.ts';
import { findRun, type NodeStore } from '../platform/node-store.ts';
import { runLabel } from '../../store/run-names.ts';

/** What a caller may override of a plan's defaults (unset: the plan's own). */
export interface EvaluationOverrides {
  /** Environment names (with a run: a subset of the run's). */
  envs?: string[];
  levels?: number[];
  items?: number;
  seed?: number;
  maxNewTokens?: number;
  maxSteps?: number;
}

/** What one evaluation evaluates: environments with their levels, the items, the episode settings and the adapter. */
export interface EvaluationPlan {
  config: RunConfig;
  envs: { env: Environment; levels: number[] | undefined }[];
  items: number;
  seed: number;
  sampling: Partial<SamplingParams>;
  maxSteps: number;
  toolTimeoutMs: number;
  /** What is put on top of the base: an adapter zip or a run's checkpoint. */
  adapter: { label: string; attach(loaded: NodeModel): void } | null;
  /** Said before the results: what is evaluated and why those defaults. */
  note: string;
}

/** One scored item, as `spindle eval --output` writes it. */
export interface ScoredItem {
  env: string;
  level: number;
  task_id: string;
  score: number | null;
  success: boolean;
}

/** A stored run's latest checkpoint, evaluated as the run evaluates itself; overrides change each part. */
export async function runEvaluationPlan(
  store: NodeStore,
  runId: string,
  over: EvaluationOverrides = {},
): Promise<EvaluationPlan> {
  const record = await findRun(store, runId, true);
  await installRunEnvironments(record.environments);
  const config = record.config;
  const checkpoint = await loadLatestCheckpoint(store, record.id);
  if (!checkpoint) throw new Error(`Run ${record.id} has no checkpoint yet; nothing to evaluate.`);
  const adapter = await checkpointAdapter(store, checkpoint);
  const settings = evaluationSettings(config);
  const envs = (over.envs ?? config.tasks.environments).map((name) => ({
    env: getEnvironment(name),
    levels: over.levels ?? [fixedLevel(config.tasks, name)],
  }));
  return {
    config,
    envs,
    items: over.items ?? settings.items,
    seed: over.seed ?? settings.seed,
    sampling: { ...settings.sampling, max_new_tokens: over.maxNewTokens ?? settings.sampling.max_new_tokens },
    maxSteps: over.maxSteps ?? settings.maxSteps,
    toolTimeoutMs: settings.toolTimeoutMs,
    adapter: {
      label: `run ${runLabel(record)} at step ${checkpoint.step}`,
      attach: (loaded) => attachAdapterTensors(loaded, adapter.config, adapter.tensors, `run ${record.id}`),
    },
    note: `eval: run ${runLabel(record)} at step ${checkpoint.step}, as the run evaluates itself`,
  };
}

/**
 * A model on `config`'s environments (the user's own already resolved), 16 items each by default, the
 * lowest level unless levels are given; `adapter` is a PEFT adapter zip to put on top.
 */
export function modelEvaluationPlan(
  config: RunConfig,
  over: EvaluationOverrides = {},
  adapter: { label: string; bytes: Uint8Array } | null = null,
): EvaluationPlan {
  return {
    config,
    envs: config.tasks.environments.map((name) => ({ env: getEnvironment(name), levels: over.levels })),
    items: over.items ?? 16,
    seed: over.seed ?? config.seed,
    sampling: { max_new_tokens: over.maxNewTokens ?? config.sampling.max_new_tokens },
    maxSteps: over.maxSteps ?? config.trajectory_collection.max_steps_per_trajectory,
    toolTimeoutMs: config.trajectory_collection.tool_timeout_ms,
    adapter: adapter
      ? { label: adapter.label, attach: (loaded) => void attachAdapterZip(loaded, adapter.bytes, adapter.label) }
      : null,
    note: adapter
      ? `eval: the model with ${adapter.label}`
      : 'eval: the base model (no --run or --adapter); --run RUN_ID evaluates a trained run',
  };
}

/** A level an environment lacks would make its episodes silently zero: the sentence refusing it, or null when every level exists. */
export function missingLevels(plan: EvaluationPlan): string | null {
  for (const { env, levels } of plan.envs) {
    const missing = (levels ?? []).filter((l) => !env.difficulties.includes(l));
    if (missing.length > 0)
      return `eval: ${env.name} has no level ${missing.join(', ')}; its levels are ${env.difficulties.join(', ')}. Nothing was evaluated.`;
  }
  return null;
}

/** Episodes the plan runs (for a progress bar). */
export function plannedEpisodes(plan: EvaluationPlan): number {
  return plan.envs.reduce(
    (n, { env, levels }) => n + (levels ? levels.filter((l) => env.difficulties.includes(l)).length : 1) * plan.items,
    0,
  );
}

/**
 * Runs the plan on `loaded` (its adapter attached first, greedy episodes scored by each environment) and
 * returns the results, every item's score, and the results as a table with the best task-blind
 * policy's success on the same items beside each rate.
 */
export async function evaluateModel(
  loaded: NodeModel,
  plan: EvaluationPlan,
  options: {
    split: Split;
    signal?: AbortSignal;
    onAttached?: (label: string) => void;
    onEpisode?: (item: ScoredItem) => void;
  },
): Promise<{ results: EvalResult[]; items: ScoredItem[]; table: string }> {
  const { split, signal } = options;
  if (plan.adapter) {
    plan.adapter.attach(loaded);
    options.onAttached?.(plan.adapter.label);
  }
  const policy = new LocalPolicy(loaded.model, loaded.tokenizer);
  const items: ScoredItem[] = [];
  const results: EvalResult[] = [];
  for (const { env, levels } of plan.envs) {
    results.push(
      ...(await evaluatePolicy(policy, [env], {
        split,
        levels,
        items: plan.items,
        seed: plan.seed,
        maxSteps: plan.maxSteps,
        toolTimeoutMs: plan.toolTimeoutMs,
        signal,
        sampling: plan.sampling,
        onEpisode: (t, score) => {
          const item = {
            env: t.env,
            level: t.difficulty,
            task_id: t.task_id,
            score,
            success: isSuccess(score) === true,
          };
          items.push(item);
          options.onEpisode?.(item);
        },
      })),
    );
  }
  const blind = new Map<string, { task: number; part: number | null }>();
  for (const r of results) {
    const best = await bestBlindByKind(getEnvironment(r.env), r.level, { items: plan.items, seed: plan.seed, split });
    blind.set(`${r.env}/${r.level}`, { task: best.task.success, part: best.part?.success ?? null });
  }
  return { results, items, table: formatEvalTable(results, blind) };
}
