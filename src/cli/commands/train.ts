/**
 * `spindle train` and `spindle transfer train`:
 * online GRPO through the pipeline (rollout workers on worker_threads, the model and trainer here),
 * stored in the file store. Ctrl-C stops after the current update and saves a checkpoint; the run
 * resumes with `--resume RUN_ID`.
 *
 * Transfer between environments (pipeline/operations/transfer.ts) starts the run's trainer from the source:
 * the source run's latest checkpoint or a PEFT adapter zip read here, then the target's frozen layers and
 * the scaled learning rate.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { CliError, type Command, type CommandContext } from '../command.ts';
import { pipeline } from '../pipeline.ts';
import type { RunConfig } from '../../config/schema.ts';
import type { EnvironmentSource, Metrics } from '../../contracts.ts';
import type { TrainOutcome, TransferSource } from '../../pipeline/platform/node-train.ts';
import type { NodeStore } from '../../pipeline/platform/node-store.ts';
import { applyCalibrationOption, calibrationOption } from './calibrate.ts';
import { Progress } from './progress.ts';
import { smallConfig } from './small.ts';
import { formatSuccessCount } from '../../pipeline/operations/report-text.ts';
import { envFileOption, useUserEnvironments } from './user-envs.ts';
import {
  intOption,
  loadConfigFile,
  loadModel,
  modelOption,
  modelPath,
  noPositionals,
  readBytes,
  requireOption,
  storeDir,
  storeOption,
  stringOption,
  withStore,
  type Values,
} from './shared.ts';

const trainOptions = {
  config: {
    type: 'string',
    description: 'the run config (spindle train: default spindle.yaml when there is one)',
    placeholder: 'file',
  },
  steps: { type: 'string', description: 'override training.max_steps', placeholder: 'n' },
  'eval-interval': {
    type: 'string',
    description: 'override training.eval_interval (held-out eval every M steps)',
    placeholder: 'm',
  },
  workers: {
    type: 'string',
    description: 'override trajectory_collection.n_workers (rollout worker threads)',
    placeholder: 'n',
  },
  model: modelOption,
  calibration: calibrationOption,
  store: storeOption,
} as const;

function applyOverrides(ctx: CommandContext, config: RunConfig, values: Values): RunConfig {
  const c = structuredClone(config);
  // The run records the model it trains (a folder, hf:id@revision or URL): its adapter names that base,
  // and a resume or merged export finds it again without --model.
  if (stringOption(values, 'model')) c.model.base_model = modelPath(ctx, values, c.model.base_model);
  c.training.max_steps = intOption(values, 'steps') ?? c.training.max_steps;
  c.training.eval_interval = intOption(values, 'eval-interval') ?? c.training.eval_interval;
  c.trajectory_collection.n_workers = intOption(values, 'workers') ?? c.trajectory_collection.n_workers;
  return smallConfig(applyCalibrationOption(ctx, values, c));
}

/** Said when a run starts from 0% held-out: GRPO needs some successes in its groups to learn from. */
const BOOTSTRAP_HINT = (env: string) =>
  `warning: ${env} starts at 0% held-out: if its training groups score 0 too, GRPO has no spread of rewards to learn from. Start it from demonstrations instead: spindle bootstrap --env ${env}`;

function metricText(m: Metrics): string {
  const parts: string[] = [];
  if (m.reward !== undefined) parts.push(`reward ${m.reward.toFixed(3)}`);
  if (m['train/loss'] !== undefined) parts.push(`loss ${m['train/loss'].toFixed(4)}`);
  return parts.join(', ');
}

/** Runs (or resumes) a training run to the end or to Ctrl-C (pipeline/platform/node-train.ts), showing progress and each evaluation. */
async function runTraining(
  ctx: CommandContext,
  values: Values,
  config: RunConfig,
  store: NodeStore,
  transfer?: TransferSource,
  environments: EnvironmentSource[] = [],
): Promise<LabelledOutcome> {
  let last: Metrics = {};
  const progress = new Progress(ctx, 'train: steps', config.training.max_steps, 10);
  try {
    const outcome = await pipeline().trainInNode({
      store,
      config,
      resumeRunId: stringOption(values, 'resume'),
      environments,
      transfer,
      signal: ctx.signal,
      loadModel: (cfg) => loadModel(ctx, modelPath(ctx, values, cfg.model.base_model), cfg),
      onEvent: (e) => {
        if (e.type === 'update') last = e.metrics;
        else if (e.type === 'progress') progress.update(e.done, metricText(last), e.total);
        else if (e.type === 'evaluation') {
          ctx.err(`eval step ${e.step} ${e.env} (${e.split}): ${formatSuccessCount(Math.round(e.success * e.n), e.n)}`);
          if (e.step === 0 && e.split === 'test' && e.success === 0 && e.n > 0) ctx.err(BOOTSTRAP_HINT(e.env));
        } else if (e.type === 'error' && !e.fatal) ctx.err(`warning: ${e.message}`);
      },
    });
    return { ...outcome, label: (await pipeline().runLabeller(store))(outcome.runId) };
  } finally {
    progress.finish();
  }
}

/** A finished training run, `label` its id with its name beside it (`runLabeller`). */
type LabelledOutcome = TrainOutcome & { label: string };

function reportTraining(ctx: CommandContext, values: Values, outcome: LabelledOutcome): void {
  const latest = new Map<string, TrainOutcome['evaluations'][number]>();
  for (const e of outcome.evaluations) latest.set(e.env, e);
  ctx.out(
    `run ${outcome.label}: ${outcome.stopped ? 'stopped' : 'finished'} at step ${outcome.steps}; checkpoint saved in ${storeDir(ctx, values)}`,
  );
  for (const e of latest.values())
    ctx.out(`  eval ${e.env} at step ${e.step} (test): ${formatSuccessCount(Math.round(e.success * e.n), e.n)}`);
  if (outcome.stopped)
    ctx.out(
      `resume with: spindle train --resume ${outcome.runId} --store ${stringOption(values, 'store') ?? '.spindle'}`,
    );
}

export const train: Command = {
  name: 'train',
  summary: "Online GRPO on the config's environments; Ctrl-C checkpoints.",
  options: {
    ...trainOptions,
    resume: {
      type: 'string',
      description: 'continue this run from its latest checkpoint (its stored config and environments are used)',
      placeholder: 'run-id',
    },
    'env-file': envFileOption,
  },
  async run(values, positionals, ctx) {
    noPositionals(positionals, 'train');
    const resume = stringOption(values, 'resume');
    // `spindle config init` writes spindle.yaml: train picks it up without --config.
    const configPath =
      stringOption(values, 'config') ?? (existsSync(resolve(ctx.cwd, 'spindle.yaml')) ? 'spindle.yaml' : undefined);
    if (!resume && !configPath)
      throw new CliError(
        '--config is required (or --resume RUN_ID, or a spindle.yaml here from `spindle config init`), e.g. spindle train --config spindle.yaml.',
        2,
      );
    const outcome = await withStore(
      ctx,
      values,
      async (store) => {
        if (resume) return runTraining(ctx, values, await pipeline().configToResume(store, resume), store);
        const loaded = applyOverrides(ctx, loadConfigFile(ctx, configPath!, { userEnvironments: true }), values);
        const { config, sources } = await useUserEnvironments(ctx, values, loaded, store);
        return runTraining(ctx, values, config, store, undefined, sources);
      },
      { create: true },
    );
    reportTraining(ctx, values, outcome);
  },
};

/** The transfer source a config names: an adapter zip on disk (read here), or a run id in the store. */
async function transferSource(ctx: CommandContext, store: NodeStore, source: string): Promise<TransferSource> {
  const asFile = resolve(ctx.cwd, source);
  if (source.endsWith('.zip') || existsSync(asFile)) {
    if (!existsSync(asFile)) throw new CliError(`The transfer source ${source} does not exist.`);
    return { kind: 'adapter', bytes: readBytes(ctx, asFile, 'adapter zip'), label: source };
  }
  return pipeline().runTransferSource(store, source);
}

export const transferTrain: Command = {
  name: 'transfer train',
  summary:
    'Train a transfer config (from `spindle transfer init`): load the source checkpoint, freeze layers, scaled learning rate.',
  options: trainOptions,
  async run(values, positionals, ctx) {
    noPositionals(positionals, 'transfer train');
    const config = applyOverrides(
      ctx,
      loadConfigFile(ctx, requireOption(values, 'config', '--config transfer.yaml')),
      values,
    );
    const source = config.transfer.source_checkpoint;
    if (!source)
      throw new CliError(
        'The config has no transfer.source_checkpoint; write one with `spindle transfer init --source RUN_ID|ZIP`.',
      );
    const outcome = await withStore(
      ctx,
      values,
      async (store) => {
        const from = await transferSource(ctx, store, source);
        const [lr, scale] = [config.training.learning_rate, config.transfer.learning_rate_scale];
        ctx.out(
          `transfer from ${from.label} → ${config.tasks.environments.join(', ')}: frozen layers ${config.lora.freeze_layers ?? 'none'}, learning rate ${lr} × ${scale} = ${+pipeline().transferLearningRate(config).toPrecision(4)}`,
        );
        return runTraining(ctx, values, config, store, from);
      },
      { create: true },
    );
    reportTraining(ctx, values, outcome);
  },
};
