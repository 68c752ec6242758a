/**
 * The trainer's checkpoint: plain data (structured-clone safe, so it goes to IndexedDB or a file as
 * is) holding everything the next step depends on — trainable weights, optimizer state, replay
 * buffer, curriculum, safety-monitor state, RNG state, data mix and step — so a resumed run
 * reproduces the uninterrupted one exactly.
 *
 * Weights are stored by name: PEFT adapter keys (`base_model.model.….lora_A.weight`) when LoRA is
 * attached, HF parameter names otherwise (full fine-tuning), so a checkpoint also serves as the
 * source of a transfer run and as an exportable adapter.
 */
import type { RunConfig } from '../config/schema.ts';
import { exportLora, importLora } from '../model/lora.ts';
import type { HostTensor, LoraSettings, TransformerModel } from '../model/transformer.ts';
import type { CurriculumState } from './curriculum.ts';
import type { OptimizerState } from './optimizer.ts';
import type { ReplayState } from './replay-buffer.ts';
import type { RngState } from '../rng.ts';
import type { SafetyState } from './safety-monitor.ts';

export const CHECKPOINT_VERSION = 1;

/** What `prepareModel` (model-setup.ts) decided; stored in checkpoints so a resumed run rebuilds the same model. */
export interface PreparedModel {
  learningRate: number;
  frozenLayers: number[];
  /** The adapters (rank, scale, modules, layers that carry them), or null for full fine-tuning. */
  lora: LoraSettings | null;
}

export interface WeightSnapshot {
  kind: 'lora' | 'full';
  tensors: [string, HostTensor][];
}

export interface TrainerCheckpoint {
  version: typeof CHECKPOINT_VERSION;
  run_id: string;
  /** Updates done so far; the next step is `step`. */
  step: number;
  config: RunConfig;
  /** Adapter layout, frozen layers and learning rate the run was prepared with. */
  setup: PreparedModel;
  weights: WeightSnapshot;
  optimizer: OptimizerState;
  replay: ReplayState;
  curriculum: CurriculumState;
  safety: SafetyState;
  rng: RngState;
  /** Current share of online data (lowered after a regression). */
  online_ratio: number;
  /** The best safety-checked weights, which a regression rolls back to; null before any check. */
  rollback: { step: number; weights: WeightSnapshot; optimizer: OptimizerState } | null;
  /** SFT updates done so far. */
  sft_step: number;
  /** Milliseconds since the epoch. */
  created_at: number;
}

/** The trainable weights by name: the LoRA adapters, or every base weight when there is no LoRA. */
export async function snapshotWeights(model: TransformerModel): Promise<WeightSnapshot> {
  if (model.lora) return { kind: 'lora', tensors: [...(await exportLora(model)).entries()] };
  return { kind: 'full', tensors: [...(await model.getWeights()).entries()] };
}

export function restoreWeights(model: TransformerModel, snap: WeightSnapshot): void {
  if (snap.kind === 'lora') {
    if (!model.lora)
      throw new Error(
        'checkpoint: it holds LoRA adapters but the model has none; attach LoRA with the checkpoint config first',
      );
    importLora(model, new Map(snap.tensors));
  } else {
    if (model.lora)
      throw new Error(
        'checkpoint: it holds full weights but the model has LoRA adapters; detach them (or set lora.r = 0)',
      );
    model.setWeights(new Map(snap.tensors), 'checkpoint');
  }
}

export function checkCheckpoint(ckpt: TrainerCheckpoint): TrainerCheckpoint {
  if (ckpt.version !== CHECKPOINT_VERSION) {
    throw new Error(
      `checkpoint: version ${String(ckpt.version)} is not supported (this build reads version ${CHECKPOINT_VERSION})`,
    );
  }
  return ckpt;
}
