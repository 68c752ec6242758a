/**
 * Online GRPO in Node (`spindle train`, `spindle transfer train`): a
 * PipelineRun over worker_threads (node.ts), started or resumed, stopped by a signal (after the current
 * update, with a checkpoint), and summed up as the step reached and each held-out evaluation. A transfer
 * starts the run's trainer from its source (train/model-setup.ts, the one transfer path): a run's latest
 * checkpoint, or a PEFT adapter zip the run's loader attaches to the freshly loaded model; a resumed run
 * has its own weights already.
 */
import type { RunConfig } from '../../config/schema.ts';
import type { EnvironmentSource } from '../../contracts.ts';
import { getRun, loadLatestCheckpoint } from '../../store/index.ts';
import type { TrainerCheckpoint } from '../../train/checkpoint.ts';
import type { RunEvent } from '../operations/events.ts';
import { createNodeRun } from './node.ts';
import { attachAdapterZip, type NodeModel } from './node-model.ts';
import { runLabeller, type NodeStore } from './node-store.ts';
import { checkpointSource } from '../operations/transfer.ts';
import type { TransferStart } from '../../train/model-setup.ts';

/** Where a transfer's weights come from: a run's latest checkpoint, or an adapter zip's bytes. */
export type TransferSource =
  | { kind: 'checkpoint'; checkpoint: TrainerCheckpoint; label: string }
  | { kind: 'adapter'; bytes: Uint8Array; label: string };

/** The run `runId`'s latest checkpoint as a transfer source; throws when the store has no such run with a checkpoint. */
export async function runTransferSource(store: NodeStore, runId: string): Promise<TransferSource> {
  const checkpoint = await checkpointSource(store, runId);
  if (!checkpoint)
    throw new Error(
      `The transfer source "${runId}" is neither an adapter zip nor a run with a checkpoint in ${store.path}.`,
    );
  return { kind: 'checkpoint', checkpoint, label: `run ${(await runLabeller(store))(runId)}` };
}

/** The stored config of the run to resume; throws when there is none. */
export async function configToResume(store: NodeStore, runId: string): Promise<RunConfig> {
  const record = await getRun(store, runId);
  if (!record) throw new Error(`There is no run "${runId}" to resume in ${store.path}.`);
  return record.config;
}

export interface NodeTrainOptions {
  store: NodeStore;
  /** The run's config (a resumed run: its stored one, configToResume). */
  config: RunConfig;
  /** Continue this run from its latest checkpoint. */
  resumeRunId?: string;
  /** The user environments it uses, installed, for the run record. */
  environments?: EnvironmentSource[];
  /** Weights to start from (ignored on resume). */
  transfer?: TransferSource;
  loadModel: (config: RunConfig) => Promise<NodeModel>;
  signal: AbortSignal;
  onEvent?: (event: RunEvent) => void;
}

export interface TrainOutcome {
  runId: string;
  steps: number;
  evaluations: { step: number; env: string; success: number; n: number }[];
  stopped: boolean;
}

/** How a wasm heap overflow (4 GB at most) shows up; GRPO batches of long episodes hit it first. */
const OUT_OF_MEMORY = /memory access out of bounds|out of memory|allocation failed/i;
const MEMORY_HINT =
  ' (the wasm heap is full: raise training.grad_accum_steps, or lower training.batch_size × group_size, sampling.max_new_tokens or max_steps_per_trajectory)';

/** An adapter source goes onto the run's freshly loaded model here (the trainer then freezes and scales); errors name the source. */
function attachAdapterSource(loaded: NodeModel, source: TransferSource): void {
  if (source.kind !== 'adapter') return;
  try {
    attachAdapterZip(loaded, source.bytes, source.label);
  } catch (e) {
    throw new Error(`transfer from ${source.label}: ${(e as Error).message}`, { cause: e });
  }
}

/** Where the trainer starts a transfer from. */
const transferStart = (source: TransferSource): TransferStart =>
  source.kind === 'checkpoint' ? { checkpoint: source.checkpoint } : { adapterAttached: true };

/** Runs (or resumes) a training run to the end or to the signal; a fatal run error is thrown after the run wound down. */
export async function trainInNode(options: NodeTrainOptions): Promise<TrainOutcome> {
  const { store, config, resumeRunId, transfer, signal } = options;
  let model: NodeModel | null = null;
  const run = createNodeRun({
    store,
    loadModel: async (cfg) => {
      model = await options.loadModel(cfg);
      if (transfer && !resumeRunId) attachAdapterSource(model, transfer);
      return model;
    },
  });
  const outcome: TrainOutcome = { runId: '', steps: 0, evaluations: [], stopped: false };
  let fatal: string | null = null;
  run.subscribe((e) => {
    if (e.type === 'update') outcome.steps = e.step;
    else if (e.type === 'evaluation')
      outcome.evaluations.push({ step: e.step, env: e.env, success: e.success, n: e.n });
    else if (e.type === 'checkpoint') outcome.steps = Math.max(outcome.steps, e.step);
    else if (e.type === 'error' && e.fatal) fatal = e.message;
    options.onEvent?.(e);
  });
  const stop = () => void run.stop();
  signal.addEventListener('abort', stop, { once: true });
  try {
    const transferFrom = transfer && !resumeRunId ? transferStart(transfer) : undefined;
    outcome.runId = await run.start(config, { resumeRunId, environments: options.environments ?? [], transferFrom });
    // A resumed run reports the step it reached, also when it had no update left to do (it was at the end).
    if (resumeRunId)
      outcome.steps = Math.max(outcome.steps, (await loadLatestCheckpoint(store, outcome.runId))?.step ?? 0);
    if (signal.aborted) stop();
    await run.done();
  } finally {
    signal.removeEventListener('abort', stop);
    (model as NodeModel | null)?.model.dispose();
  }
  if (fatal) throw new Error(`run ${outcome.runId} failed: ${fatal}${OUT_OF_MEMORY.test(fatal) ? MEMORY_HINT : ''}`);
  outcome.stopped = signal.aborted;
  return outcome;
}
