/**
 * `spindle eval --env NAME --split test`: greedy episodes on held-out items
 * of built-in environments, your own (--env-file) or ones kept in the store (`spindle envs add`),
 * scored by the environment, printed as a table (and written as JSON with --output). An adapter zip
 * from `spindle sft` / `spindle export adapter` can be applied on top of the model.
 */
import { CliError, type Command, type CommandContext } from '../command.ts';
import { pipeline } from '../pipeline.ts';
import type { Split } from '../../contracts.ts';
import { DEFAULT_CONFIG } from '../../config/schema.ts';
import type { EvaluationOverrides, EvaluationPlan } from '../../pipeline/operations/model-evaluation.ts';
import { Progress } from './progress.ts';
import { SMALL_SIZES, smallSizes } from './small.ts';
import { envFileOption, useUserEnvironments } from './user-envs.ts';
import {
  choiceOption,
  configOrDefault,
  intOption,
  loadModel,
  modelOption,
  modelPath,
  noPositionals,
  readBytes,
  storeOption,
  stringOption,
  withStore,
  writeOutput,
  type Values,
} from './shared.ts';

function parseLevels(raw: string | undefined): number[] | undefined {
  if (raw === undefined) return undefined;
  const levels = raw.split(',').map((s) => Number(s.trim()));
  if (levels.some((l) => !Number.isInteger(l) || l < 1))
    throw new CliError(`--level must be a level or a list like 1,2,3, got "${raw}".`, 2);
  return levels;
}

/** The flags that override a plan's defaults. */
function overrides(values: Values): EvaluationOverrides {
  const envs = stringOption(values, 'env')
    ?.split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  return {
    envs: envs?.length ? envs : undefined,
    levels: parseLevels(stringOption(values, 'level')),
    items: smallSizes()
      ? Math.min(intOption(values, 'items') ?? SMALL_SIZES.evalItems, SMALL_SIZES.evalItems)
      : intOption(values, 'items'),
    seed: intOption(values, 'seed', 0),
    maxNewTokens: intOption(values, 'max-new-tokens'),
    maxSteps: intOption(values, 'max-steps'),
  };
}

/** `--env NAME` / `--env-file FILE`: the base model (or --adapter) on the environments named. */
async function plainPlan(ctx: CommandContext, values: Values): Promise<EvaluationPlan> {
  const over = overrides(values);
  if (!over.envs && !values['env-file'])
    throw new CliError(
      '--env or --run is required (or --env-file FILE), e.g. --env arith_tool, or --run RUN_ID for a trained run.',
      2,
    );
  const config = configOrDefault(ctx, stringOption(values, 'config'), DEFAULT_CONFIG, { userEnvironments: true });
  // Only the environments asked for here: the user's own come from --env-file or the store.
  const asked = {
    ...config,
    tasks: { ...config.tasks, environments: over.envs ?? [], task_file: null, env_files: [] },
  };
  const { config: resolved } = await useUserEnvironments(ctx, values, asked);
  const adapterPath = stringOption(values, 'adapter');
  const plan = pipeline().modelEvaluationPlan(
    { ...config, tasks: resolved.tasks },
    over,
    adapterPath ? { label: adapterPath, bytes: readBytes(ctx, adapterPath, 'adapter zip') } : null,
  );
  const refused = pipeline().missingLevels(plan);
  if (refused) throw new CliError(refused, 2);
  return plan;
}

export const evaluate: Command = {
  name: 'eval',
  summary: "Evaluate a run's checkpoint (--run), or the model plus an optional adapter, on held-out items.",
  options: {
    run: {
      type: 'string',
      description:
        "evaluate this run's latest checkpoint exactly as the run evaluates itself (its environments, levels, items, seed)",
      placeholder: 'id',
    },
    env: {
      type: 'string',
      description: "environment(s), comma-separated (with --run: a subset of the run's)",
      placeholder: 'name',
    },
    split: { type: 'string', default: 'test', description: 'test (held out) or train', placeholder: 'split' },
    items: {
      type: 'string',
      description: "distinct items per environment and level (default: 16; with --run the run's tasks.eval_items)",
      placeholder: 'n',
    },
    level: {
      type: 'string',
      description:
        "difficulty level(s), e.g. 1 or 1,2,3 (default: the lowest; with --run each environment's level in the run)",
      placeholder: 'L',
    },
    model: modelOption,
    adapter: { type: 'string', description: 'a PEFT adapter zip to apply', placeholder: 'zip' },
    'max-steps': {
      type: 'string',
      description: 'assistant turns per episode (default: trajectory_collection.max_steps_per_trajectory)',
      placeholder: 'n',
    },
    'max-new-tokens': {
      type: 'string',
      description: 'tokens per turn (default: sampling.max_new_tokens)',
      placeholder: 'n',
    },
    seed: { type: 'string', description: "item seed (default: the config's seed)", placeholder: 'n' },
    config: { type: 'string', description: 'run config for the defaults above', placeholder: 'file' },
    output: {
      type: 'string',
      description: "write the results (and each item's score) as JSON here",
      placeholder: 'file.json',
    },
    'env-file': envFileOption,
    store: storeOption,
  },
  async run(values, positionals, ctx) {
    noPositionals(positionals, 'eval');
    const runId = stringOption(values, 'run');
    if (runId && (values.adapter || values['env-file']))
      throw new CliError("--run evaluates the run's own checkpoint and environments; drop --adapter / --env-file.", 2);
    const plan = runId
      ? await withStore(ctx, values, (store) => pipeline().runEvaluationPlan(store, runId, overrides(values)), {
          readOnly: true,
        })
      : await plainPlan(ctx, values);
    const split = choiceOption<Split>(values, 'split', ['test', 'train'], 'test');
    const { config, items, seed } = plan;
    const loaded = await loadModel(ctx, modelPath(ctx, values, config.model.base_model), config);
    try {
      const progress = new Progress(ctx, 'eval: episodes', pipeline().plannedEpisodes(plan));
      let solved = 0;
      const evaluated = await pipeline()
        .evaluateModel(loaded, plan, {
          split,
          signal: ctx.signal,
          onAttached: (label) => ctx.err(`eval: applied ${label}`),
          onEpisode: (item) => {
            if (item.success) solved++;
            progress.tick(1, `solved ${solved}`);
          },
        })
        .catch((e: unknown) => {
          if (ctx.signal.aborted) throw new CliError('eval: interrupted; no results written.', 130);
          throw e;
        });
      progress.finish();
      ctx.out(plan.note);
      ctx.out(evaluated.table);
      const output = stringOption(values, 'output');
      if (output) {
        const file = writeOutput(
          ctx,
          output,
          JSON.stringify(
            {
              model: modelPath(ctx, values, config.model.base_model),
              adapter: plan.adapter?.label ?? null,
              run: runId ?? null,
              split,
              items,
              seed,
              results: evaluated.results,
              items_scored: evaluated.items,
            },
            null,
            2,
          ) + '\n',
        );
        ctx.out(`wrote ${file}`);
      }
    } finally {
      loaded.model.dispose();
    }
  },
};
