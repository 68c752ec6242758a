/**
 * The one adapter export (CLI `spindle export adapter` and the Models screen alike): a stored
 * checkpoint as a PEFT adapter. The PEFT config comes from what the checkpoint trained — the LoRA
 * setup the trainer saved in it (rank, alpha, modules, and `layers_to_transform` when layers were
 * frozen) — not from today's run config; an imported adapter keeps the config it came with. A full
 * fine-tuning checkpoint (`lora.r: 0`) holds every weight, not an adapter, and is refused.
 */
import { DEFAULT_CONFIG } from '../../config/schema.ts';
import { adapterZip, peftConfigFromRun, type PeftConfig } from '../../export/peft.ts';
import { readSafetensors } from '../../hub/safetensors.ts';
import type { HostTensors } from '../../model/transformer.ts';
import {
  getRun,
  listEvaluations,
  loadLatestCheckpoint,
  type CheckpointRecord,
  type RunRecord,
  type Store,
} from '../../store/index.ts';
import type { PreparedModel } from '../../train/checkpoint.ts';

export interface CheckpointAdapter {
  config: PeftConfig;
  tensors: HostTensors;
  /** The run that trained it (undefined for an imported adapter, or a run since deleted). */
  run: RunRecord | undefined;
}

/** The checkpoint's adapter tensors and the PEFT config that describes them; throws for full-weight checkpoints. */
export async function checkpointAdapter(store: Store, checkpoint: CheckpointRecord): Promise<CheckpointAdapter> {
  const { tensors, metadata } = readSafetensors(new Uint8Array(checkpoint.adapter), `checkpoint ${checkpoint.id}`);
  if (metadata.spindle_weights === 'full') {
    throw new Error(`Run ${checkpoint.run_id} fine-tuned every weight (lora.r = 0); it has no adapter to export.`);
  }
  const imported = checkpoint.meta.peft as PeftConfig | undefined;
  if (imported) return { config: imported, tensors, run: undefined };
  const run = await getRun(store, checkpoint.run_id);
  const setup = (checkpoint.meta.checkpoint as { setup?: PreparedModel } | undefined)?.setup;
  const config = peftConfigFromRun(run?.config ?? DEFAULT_CONFIG, setup?.lora?.layers ?? null);
  if (setup?.lora)
    Object.assign(config, {
      r: setup.lora.r,
      lora_alpha: setup.lora.alpha,
      target_modules: [...setup.lora.targetModules],
    });
  return { config, tensors, run };
}

/** The base an adapter folds into: the base model its run trained; an imported adapter names its own; else the shipped base. */
export function adapterBaseModel({ run, config }: CheckpointAdapter): string {
  return (run ? run.config.model.base_model : config.base_model_name_or_path) || DEFAULT_CONFIG.model.base_model;
}

/** The PEFT adapter zip (adapter_config.json, adapter_model.safetensors, README.md model card with the run's evaluations). */
export async function checkpointAdapterZip(
  store: Store,
  checkpoint: CheckpointRecord,
): Promise<CheckpointAdapter & { zip: Uint8Array }> {
  const adapter = await checkpointAdapter(store, checkpoint);
  const { run } = adapter;
  const evals = run
    ? (await listEvaluations(store, run.id)).map((e) => ({ benchmark: e.benchmark, step: e.step, results: e.results }))
    : undefined;
  try {
    return {
      ...adapter,
      zip: adapterZip(adapter.tensors, {
        config: adapter.config,
        run: run?.config,
        evals,
        title: run?.name,
        environments: run?.environments,
      }),
    };
  } catch (e) {
    throw new Error(`checkpoint ${checkpoint.id}: ${(e as Error).message}`, { cause: e });
  }
}

/** A run's latest checkpoint as a PEFT adapter zip (`spindle export adapter`); throws when the run has no checkpoint yet. */
export async function latestAdapterZip(
  store: Store,
  runId: string,
): Promise<CheckpointAdapter & { zip: Uint8Array; step: number }> {
  const checkpoint = await loadLatestCheckpoint(store, runId);
  if (!checkpoint)
    throw new Error(`Run ${runId} has no checkpoint yet; train it (a checkpoint is taken after every update).`);
  return { ...(await checkpointAdapterZip(store, checkpoint)), step: checkpoint.step };
}
