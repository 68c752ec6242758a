/**
 * `spindle eval --env NAME --split test` (the seed's hermes_eval): greedy episodes on held-out items
 * of built-in environments, your own (--env-file) or ones kept in the store (`spindle envs add`),
 * scored by the environment, printed as a table (and written as JSON with --output). An adapter zip
 * from `spindle sft` / `spindle export adapter` can be applied on top of the model.
 */
import { CliError, type Command } from '../command.ts';
import { isSuccess, type Split } from '../../contracts.ts';
import { bestBlindSuccess } from '../../rollout/blind-policies.ts';
import { getEnvironment } from '../../envs/registry.ts';
import type { Environment } from '../../envs/types.ts';
import { evaluatePolicy, evaluationSettings, formatEvalTable, type EvalResult } from '../../rollout/evaluate.ts';
import { LocalPolicy } from '../../rollout/local-policy.ts';
import { DEFAULT_CONFIG, type RunConfig } from '../../config/schema.ts';
import { fixedLevel } from '../../config/levels.ts';
import type { SamplingParams } from '../../contracts.ts';
import { installEnvironmentSource } from '../../envs/sources.ts';
import type { LoadedModel } from '../../model/hf.ts';
import { checkpointAdapter, type CheckpointAdapter } from '../../pipeline/adapter-export.ts';
import { loadLatestCheckpoint } from '../../store/index.ts';
import type { CommandContext } from '../command.ts';
import { Progress } from './progress.ts';
import { envFileOption, useUserEnvironments } from './user-envs.ts';
import {
  applyAdapter, attachAdapter, choiceOption, configOrDefault, findRun, intOption, loadModel, modelOption, modelPath, noPositionals, storeOption, stringOption,
  withStore, writeOutput, type Values,
} from './shared.ts';

function parseLevels(raw: string | undefined): number[] | undefined {
  if (raw === undefined) return undefined;
  const levels = raw.split(',').map((s) => Number(s.trim()));
  if (levels.some((l) => !Number.isInteger(l) || l < 1)) throw new CliError(`--level must be a level or a list like 1,2,3, got "${raw}".`, 2);
  return levels;
}

/** A level an environment lacks would make its episodes silently zero: refuse it, listing the levels it has. */
function checkLevels(envs: Environment[], levels: number[]): void {
  for (const env of envs) {
    const missing = levels.filter((l) => !env.difficulties.includes(l));
    if (missing.length > 0) {
      throw new CliError(`eval: ${env.name} has no level ${missing.join(', ')}; its levels are ${env.difficulties.join(', ')}. Nothing was evaluated.`, 2);
    }
  }
}

/** What one `spindle eval` evaluates: environments with their levels, the items, the episode settings and the model. */
interface EvalPlan {
  config: RunConfig;
  envs: { env: Environment; levels: number[] | undefined }[];
  items: number;
  seed: number;
  sampling: Partial<SamplingParams>;
  maxSteps: number;
  toolTimeoutMs: number;
  /** What is applied on top of the base: an adapter zip or a run's checkpoint. */
  adapter: { label: string; apply(loaded: LoadedModel): void } | null;
  /** Said before the results: what is evaluated and why those defaults. */
  note: string;
}

/**
 * `--run ID`: the run's own evaluation (rollout/evaluate.ts evaluationSettings: its environments at their
 * fixed levels, its eval_items and seed, greedy with its budgets) of its latest checkpoint, so the figure
 * equals the run's last held-out one item by item. Flags still override each part.
 */
async function runPlan(ctx: CommandContext, values: Values, runId: string): Promise<EvalPlan> {
  return withStore(ctx, values, async (store) => {
    const record = await findRun(store, runId, true);
    for (const source of record.environments ?? []) await installEnvironmentSource(source);
    const config = record.config;
    const checkpoint = await loadLatestCheckpoint(store, record.id);
    if (!checkpoint) throw new CliError(`Run ${record.id} has no checkpoint yet; nothing to evaluate.`);
    let adapter: CheckpointAdapter;
    try {
      adapter = await checkpointAdapter(store, checkpoint);
    } catch (e) {
      throw new CliError((e as Error).message);
    }
    const settings = evaluationSettings(config);
    const named = stringOption(values, 'env')?.split(',').map((n) => n.trim()).filter(Boolean) ?? config.tasks.environments;
    const levels = parseLevels(stringOption(values, 'level'));
    const envs = named.map((name) => ({ env: knownEnvironment(name), levels: levels ?? [fixedLevel(config.tasks, name)] }));
    return {
      config, envs, items: intOption(values, 'items') ?? settings.items, seed: intOption(values, 'seed', 0) ?? settings.seed,
      sampling: { ...settings.sampling, max_new_tokens: intOption(values, 'max-new-tokens') ?? settings.sampling.max_new_tokens },
      maxSteps: intOption(values, 'max-steps') ?? settings.maxSteps, toolTimeoutMs: settings.toolTimeoutMs,
      adapter: { label: `run ${record.id} at step ${checkpoint.step}`, apply: (loaded) => attachAdapter(ctx, loaded, adapter.config, adapter.tensors, `run ${record.id}`) },
      note: `eval: run ${record.id} (${record.name}) at step ${checkpoint.step}, as the run evaluates itself`,
    };
  });
}

/** `--env NAME` / `--env-file FILE`: the base model (or --adapter) on the environments named. */
async function plainPlan(ctx: CommandContext, values: Values): Promise<EvalPlan> {
  const named = stringOption(values, 'env')?.split(',').map((n) => n.trim()).filter(Boolean) ?? [];
  if (!named.length && !values['env-file']) throw new CliError('--env or --run is required (or --env-file FILE), e.g. --env arith_tool, or --run RUN_ID for a trained run.', 2);
  const config = configOrDefault(ctx, stringOption(values, 'config'), DEFAULT_CONFIG, { userEnvironments: true });
  // Only the environments asked for here: the user's own come from --env-file or the store.
  const asked = { ...config, tasks: { ...config.tasks, environments: named, task_file: null, env_files: [] } };
  const { config: resolved } = await useUserEnvironments(ctx, values, asked);
  const levels = parseLevels(stringOption(values, 'level'));
  const envs = resolved.tasks.environments.map((name) => ({ env: getEnvironment(name), levels }));
  if (levels) checkLevels(envs.map((e) => e.env), levels);
  const adapterPath = stringOption(values, 'adapter');
  return {
    config, envs, items: intOption(values, 'items') ?? 16, seed: intOption(values, 'seed', 0) ?? config.seed,
    sampling: { max_new_tokens: intOption(values, 'max-new-tokens') ?? config.sampling.max_new_tokens },
    maxSteps: intOption(values, 'max-steps') ?? config.trajectory_collection.max_steps_per_trajectory,
    toolTimeoutMs: config.trajectory_collection.tool_timeout_ms,
    adapter: adapterPath ? { label: adapterPath, apply: (loaded) => void applyAdapter(ctx, loaded, adapterPath) } : null,
    note: adapterPath ? `eval: the model with ${adapterPath}` : 'eval: the base model (no --run or --adapter); --run RUN_ID evaluates a trained run',
  };
}

function knownEnvironment(name: string): Environment {
  try {
    return getEnvironment(name);
  } catch (e) {
    throw new CliError((e as Error).message);
  }
}

export const evaluate: Command = {
  name: 'eval',
  summary: 'Evaluate a run\'s checkpoint (--run), or the model plus an optional adapter, on held-out items (the seed\'s hermes_eval).',
  options: {
    run: { type: 'string', description: 'evaluate this run\'s latest checkpoint exactly as the run evaluates itself (its environments, levels, items, seed)', placeholder: 'id' },
    env: { type: 'string', description: 'environment(s), comma-separated (with --run: a subset of the run\'s)', placeholder: 'name' },
    split: { type: 'string', default: 'test', description: 'test (held out) or train', placeholder: 'split' },
    items: { type: 'string', description: 'distinct items per environment and level (default: 16; with --run the run\'s tasks.eval_items)', placeholder: 'n' },
    level: { type: 'string', description: 'difficulty level(s), e.g. 1 or 1,2,3 (default: the lowest; with --run each environment\'s level in the run)', placeholder: 'L' },
    model: modelOption,
    adapter: { type: 'string', description: 'a PEFT adapter zip to apply', placeholder: 'zip' },
    'max-steps': { type: 'string', description: 'assistant turns per episode (default: trajectory_collection.max_steps_per_trajectory)', placeholder: 'n' },
    'max-new-tokens': { type: 'string', description: 'tokens per turn (default: sampling.max_new_tokens)', placeholder: 'n' },
    seed: { type: 'string', description: 'item seed (default: the config\'s seed)', placeholder: 'n' },
    config: { type: 'string', description: 'run config for the defaults above', placeholder: 'file' },
    output: { type: 'string', description: 'write the results (and each item\'s score) as JSON here', placeholder: 'file.json' },
    'env-file': envFileOption,
    store: storeOption,
  },
  async run(values, positionals, ctx) {
    noPositionals(positionals, 'eval');
    const runId = stringOption(values, 'run');
    if (runId && (values.adapter || values['env-file'])) throw new CliError('--run evaluates the run\'s own checkpoint and environments; drop --adapter / --env-file.', 2);
    const plan = runId ? await runPlan(ctx, values, runId) : await plainPlan(ctx, values);
    const split = choiceOption<Split>(values, 'split', ['test', 'train'], 'test');
    const { config, items, seed } = plan;
    const loaded = await loadModel(ctx, modelPath(ctx, values, config.model.base_model), config);
    try {
      if (plan.adapter) {
        plan.adapter.apply(loaded);
        ctx.err(`eval: applied ${plan.adapter.label}`);
      }
      const total = plan.envs.reduce((n, { env, levels }) => n + (levels ? levels.filter((l) => env.difficulties.includes(l)).length : 1) * items, 0);
      const progress = new Progress(ctx, 'eval: episodes', total);
      let solved = 0;
      const scoredItems: { env: string; level: number; task_id: string; score: number | null; success: boolean }[] = [];
      const policy = new LocalPolicy(loaded.model, loaded.tokenizer);
      const results: EvalResult[] = [];
      for (const { env, levels } of plan.envs) {
        results.push(...await evaluatePolicy(policy, [env], {
          split, levels, items, seed, maxSteps: plan.maxSteps, toolTimeoutMs: plan.toolTimeoutMs, signal: ctx.signal, sampling: plan.sampling,
          onEpisode: (t, score) => {
            if (isSuccess(score)) solved++;
            scoredItems.push({ env: t.env, level: t.difficulty, task_id: t.task_id, score, success: isSuccess(score) === true });
            progress.tick(1, `solved ${solved}`);
          },
        }).catch((e: unknown) => {
          if (ctx.signal.aborted) throw new CliError('eval: interrupted; no results written.', 130);
          throw e;
        }));
      }
      progress.finish();
      // Beside every rate: what the best task-blind policy scores on the same items.
      const blind = new Map<string, number>();
      for (const r of results) blind.set(`${r.env}/${r.level}`, (await bestBlindSuccess(getEnvironment(r.env), r.level, { items, seed, split })).success);
      ctx.out(plan.note);
      ctx.out(formatEvalTable(results, blind));
      const output = stringOption(values, 'output');
      if (output) {
        const file = writeOutput(ctx, output, JSON.stringify({
          model: modelPath(ctx, values, config.model.base_model), adapter: plan.adapter?.label ?? null, run: runId ?? null, split, items, seed, results, items_scored: scoredItems,
        }, null, 2) + '\n');
        ctx.out(`wrote ${file}`);
      }
    } finally {
      loaded.model.dispose();
    }
  },
};
