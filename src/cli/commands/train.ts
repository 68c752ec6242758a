/**
 * `spindle train` (the seed's rl_train_online / `atropos train --config`) and `spindle transfer train`:
 * online GRPO through the pipeline (rollout workers on worker_threads, the model and trainer here),
 * stored in the file store. Ctrl-C stops after the current update and saves a checkpoint; the run
 * resumes with `--resume RUN_ID`.
 *
 * Transfer (the seed's third workflow, pipeline/transfer.ts) loads the source weights in the run's model
 * loader: the source run's latest checkpoint or a PEFT adapter zip read here, then the target's frozen
 * layers, with the learning-rate scale applied up front.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { CliError, type Command, type CommandContext } from '../command.ts';
import type { RunConfig } from '../../config/schema.ts';
import type { EnvironmentSource, Metrics } from '../../contracts.ts';
import type { LoadedModel } from '../../model/hf.ts';
import { createNodeRun } from '../../pipeline/node.ts';
import { applyTransfer, checkpointSource, transferRunConfig } from '../../pipeline/transfer.ts';
import type { RunEvent } from '../../pipeline/events.ts';
import { getRun, loadLatestCheckpoint } from '../../store/index.ts';
import type { FileStore } from '../../store/file-store.ts';
import type { TrainerCheckpoint } from '../../train/checkpoint.ts';
import { Progress } from './progress.ts';
import { envFileOption, useUserEnvironments } from './user-envs.ts';
import {
  applyAdapter, intOption, loadConfigFile, loadModel, modelOption, modelPath, noPositionals, percent, requireOption, storeDir, storeOption,
  stringOption, withStore, type Values,
} from './shared.ts';

export type TransferSource = { kind: 'checkpoint'; checkpoint: TrainerCheckpoint; label: string } | { kind: 'adapter'; path: string; label: string };

const trainOptions = {
  config: { type: 'string', description: 'the run config (spindle train: default spindle.yaml when there is one)', placeholder: 'file' },
  steps: { type: 'string', description: 'override training.max_steps', placeholder: 'n' },
  'eval-interval': { type: 'string', description: 'override training.eval_interval (held-out eval every M steps)', placeholder: 'm' },
  workers: { type: 'string', description: 'override trajectory_collection.n_workers (rollout worker threads)', placeholder: 'n' },
  model: modelOption,
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
  return c;
}

function applyTransferSource(ctx: CommandContext, loaded: LoadedModel, config: RunConfig, source: TransferSource): void {
  try {
    if (source.kind === 'checkpoint') applyTransfer(loaded.model, config, { checkpoint: source.checkpoint });
    else {
      applyAdapter(ctx, loaded, source.path);
      applyTransfer(loaded.model, config, { adapterAttached: true });
    }
  } catch (e) {
    if (e instanceof CliError) throw e;
    throw new CliError(`transfer from ${source.label}: ${(e as Error).message}`);
  }
}

function metricText(m: Metrics): string {
  const parts: string[] = [];
  if (m.reward !== undefined) parts.push(`reward ${m.reward.toFixed(3)}`);
  if (m['train/loss'] !== undefined) parts.push(`loss ${m['train/loss'].toFixed(4)}`);
  return parts.join(', ');
}

/** How a wasm heap overflow (4 GB at most) shows up; GRPO batches of long episodes hit it first. */
const OUT_OF_MEMORY = /memory access out of bounds|out of memory|allocation failed/i;
const MEMORY_HINT = ' (the wasm heap is full: raise training.grad_accum_steps, or lower training.batch_size × group_size, sampling.max_new_tokens or max_steps_per_trajectory)';

export interface TrainOutcome {
  runId: string;
  steps: number;
  evaluations: { step: number; env: string; success: number; n: number }[];
  stopped: boolean;
}

/** Runs (or resumes) a training run to the end or to Ctrl-C. */
async function runTraining(ctx: CommandContext, values: Values, config: RunConfig, store: FileStore, transfer?: TransferSource, environments: EnvironmentSource[] = []): Promise<TrainOutcome> {
  const resumeRunId = stringOption(values, 'resume');
  let model: LoadedModel | null = null;
  const run = createNodeRun({
    store,
    loadModel: async (cfg) => {
      model = await loadModel(ctx, modelPath(ctx, values, cfg.model.base_model), cfg);
      if (transfer && !resumeRunId) applyTransferSource(ctx, model, cfg, transfer);
      return model;
    },
  });
  const outcome: TrainOutcome = { runId: '', steps: 0, evaluations: [], stopped: false };
  let fatal: string | null = null;
  let last: Metrics = {};
  const progress = new Progress(ctx, 'train: steps', config.training.max_steps, 10);
  const onEvent = (e: RunEvent) => {
    if (e.type === 'update') { last = e.metrics; outcome.steps = e.step; }
    else if (e.type === 'progress') progress.update(e.done, metricText(last), e.total);
    else if (e.type === 'evaluation') {
      outcome.evaluations.push({ step: e.step, env: e.env, success: e.success, n: e.n });
      ctx.err(`eval step ${e.step} ${e.env} (${e.split}, ${e.n} items): success ${percent(e.success)}`);
    } else if (e.type === 'checkpoint') outcome.steps = Math.max(outcome.steps, e.step);
    else if (e.type === 'error') {
      if (e.fatal) fatal = e.message;
      else ctx.err(`warning: ${e.message}`);
    }
  };
  run.subscribe(onEvent);
  const stop = () => void run.stop();
  ctx.signal.addEventListener('abort', stop, { once: true });
  try {
    try {
      outcome.runId = await run.start(config, { resumeRunId, environments });
      // A resumed run reports the step it reached, also when it had no update left to do (it was at the end).
      if (resumeRunId) outcome.steps = Math.max(outcome.steps, (await loadLatestCheckpoint(store, outcome.runId))?.step ?? 0);
    } catch (e) {
      throw e instanceof CliError ? e : new CliError((e as Error).message);
    }
    if (ctx.signal.aborted) stop();
    await run.done();
  } finally {
    progress.finish();
    ctx.signal.removeEventListener('abort', stop);
    (model as LoadedModel | null)?.model.dispose();
  }
  if (fatal) throw new CliError(`run ${outcome.runId} failed: ${fatal}${OUT_OF_MEMORY.test(fatal) ? MEMORY_HINT : ''}`);
  outcome.stopped = ctx.signal.aborted;
  return outcome;
}

function reportTraining(ctx: CommandContext, values: Values, outcome: TrainOutcome): void {
  const latest = new Map<string, TrainOutcome['evaluations'][number]>();
  for (const e of outcome.evaluations) latest.set(e.env, e);
  ctx.out(`run ${outcome.runId}: ${outcome.stopped ? 'stopped' : 'finished'} at step ${outcome.steps}; checkpoint saved in ${storeDir(ctx, values)}`);
  for (const e of latest.values()) ctx.out(`  eval ${e.env} at step ${e.step}: success ${percent(e.success)} of ${e.n} test items`);
  if (outcome.stopped) ctx.out(`resume with: spindle train --resume ${outcome.runId} --store ${stringOption(values, 'store') ?? '.spindle'}`);
}

export const train: Command = {
  name: 'train',
  summary: 'Online GRPO on the config\'s environments (the seed\'s rl_train_online / atropos train --config); Ctrl-C checkpoints.',
  options: {
    ...trainOptions,
    resume: { type: 'string', description: 'continue this run from its latest checkpoint (its stored config and environments are used)', placeholder: 'run-id' },
    'env-file': envFileOption,
  },
  async run(values, positionals, ctx) {
    noPositionals(positionals, 'train');
    const resume = stringOption(values, 'resume');
    // `spindle config init` writes spindle.yaml: train picks it up without --config.
    const configPath = stringOption(values, 'config') ?? (existsSync(resolve(ctx.cwd, 'spindle.yaml')) ? 'spindle.yaml' : undefined);
    if (!resume && !configPath) throw new CliError('--config is required (or --resume RUN_ID, or a spindle.yaml here from `spindle config init`), e.g. spindle train --config spindle.yaml.', 2);
    const outcome = await withStore(ctx, values, async (store) => {
      if (resume) {
        const record = await getRun(store, resume);
        if (!record) throw new CliError(`There is no run "${resume}" to resume in ${store.path}.`);
        return runTraining(ctx, values, record.config, store);
      }
      const loaded = applyOverrides(ctx, loadConfigFile(ctx, configPath!, { userEnvironments: true }), values);
      const { config, sources } = await useUserEnvironments(ctx, values, loaded, store);
      return runTraining(ctx, values, config, store, undefined, sources);
    }, true);
    reportTraining(ctx, values, outcome);
  },
};

/** The transfer source a config names: an adapter zip on disk, or a run id in the store. */
async function transferSource(ctx: CommandContext, store: FileStore, source: string): Promise<TransferSource> {
  const asFile = resolve(ctx.cwd, source);
  if (source.endsWith('.zip') || existsSync(asFile)) {
    if (!existsSync(asFile)) throw new CliError(`The transfer source ${source} does not exist.`);
    return { kind: 'adapter', path: asFile, label: source };
  }
  const checkpoint = await checkpointSource(store, source).catch((e: unknown) => {
    throw new CliError((e as Error).message);
  });
  if (!checkpoint) throw new CliError(`The transfer source "${source}" is neither an adapter zip nor a run with a checkpoint in ${store.path}.`);
  return { kind: 'checkpoint', checkpoint, label: `run ${source}` };
}

export const transferTrain: Command = {
  name: 'transfer train',
  summary: 'Train a transfer config (from `spindle transfer init`): load the source checkpoint, freeze layers, scaled learning rate.',
  options: trainOptions,
  async run(values, positionals, ctx) {
    noPositionals(positionals, 'transfer train');
    const config = applyOverrides(ctx, loadConfigFile(ctx, requireOption(values, 'config', '--config transfer.yaml')), values);
    const source = config.transfer.source_checkpoint;
    if (!source) throw new CliError('The config has no transfer.source_checkpoint; write one with `spindle transfer init --source RUN_ID|ZIP`.');
    const outcome = await withStore(ctx, values, async (store) => {
      const from = await transferSource(ctx, store, source);
      const scaled = transferRunConfig(config);
      const [lr, scale] = [config.training.learning_rate, config.transfer.learning_rate_scale];
      ctx.out(`transfer from ${from.label} → ${config.tasks.environments.join(', ')}: frozen layers ${config.lora.freeze_layers ?? 'none'}, learning rate ${lr} × ${scale} = ${+scaled.training.learning_rate.toPrecision(4)}`);
      return runTraining(ctx, values, scaled, store, from);
    }, true);
    reportTraining(ctx, values, outcome);
  },
};
