/**
 * Gets a model ready to train from the run config: LoRA adapters (or full fine-tuning when
 * `lora.r` is 0), frozen layers, and — for transfer between environments — the source run's
 * weights and a scaled-down learning rate.
 *
 * Transfer (e.g. shell_exec → git_repo with layers 0-8 frozen, then a lower learning rate), the one path
 * every transfer takes, run once, when the trainer is made:
 * - a LoRA source (a run's checkpoint, or a PEFT adapter its loader already attached): its adapters are on
 *   every layer they cover, loaded; then the layers in `lora.freeze_layers` stop training (their adapters
 *   stay applied). The exported adapter therefore still applies to the original base model.
 * - a full-weights source: its weights replace the base; `freeze_layers` is frozen, and with
 *   `lora.r > 0` fresh adapters go on the remaining layers.
 * - the learning rate is `transferLearningRate`: `training.learning_rate × transfer.learning_rate_scale`,
 *   scaled here and nowhere else (the run config keeps both as written).
 */
import type { RunConfig } from '../config/schema.ts';
import { attachLora, freezeLayers, importLora, parseLayerRange } from '../model/lora.ts';
import type { TransformerModel } from '../model/transformer.ts';
import { checkCheckpoint, type PreparedModel, type TrainerCheckpoint } from './checkpoint.ts';

function attachFromConfig(model: TransformerModel, lora: RunConfig['lora'], seed: number, freeze: string | null): void {
  attachLora(model, {
    r: lora.r,
    alpha: lora.alpha,
    dropout: lora.dropout,
    targetModules: lora.target_modules,
    freezeLayers: freeze,
    seed,
  });
}

/**
 * The run's memory settings: gradient checkpointing (src/model/recompute.ts) and the frozen base in
 * int8 (src/model/int8.ts), which holds only frozen weights, so it needs LoRA.
 */
function applyMemorySettings(model: TransformerModel, config: RunConfig): void {
  model.recompute = config.training.gradient_checkpointing;
  if (config.model.quantization !== 'int8') return;
  if (!model.lora)
    throw new Error(
      'model.quantization: int8 holds the frozen base in 8 bits for LoRA; full fine-tuning (lora.r 0) trains the base, so set lora.r > 0 or quantization none',
    );
  model.quantizeLinears();
}

/**
 * Where a transfer starts: a source run's checkpoint (its adapters or its weights), or a PEFT adapter zip
 * the run's model loader attached to the model (pipeline/platform/node-train.ts).
 */
export type TransferStart = { checkpoint: TrainerCheckpoint } | { adapterAttached: true };

/** The learning rate a transfer trains with. */
export function transferLearningRate(config: RunConfig): number {
  return config.training.learning_rate * config.transfer.learning_rate_scale;
}

export function prepareModel(model: TransformerModel, config: RunConfig, transfer?: TransferStart): PreparedModel {
  const freeze = config.lora.freeze_layers;
  const learningRate = transfer ? transferLearningRate(config) : config.training.learning_rate;
  if (transfer && 'adapterAttached' in transfer) {
    if (!model.lora)
      throw new Error('transfer: the source adapter is not attached to the model; attach it in the model loader');
    model.frozenLayers = parseLayerRange(freeze, model.config.numLayers);
  } else if (transfer) {
    const src = checkCheckpoint(transfer.checkpoint);
    if (model.lora) throw new Error('transfer: the model already has LoRA adapters; start from the plain base model');
    if (src.weights.kind === 'lora') {
      const s = src.config.lora;
      attachFromConfig(model, { ...s, dropout: config.lora.dropout }, config.seed, s.freeze_layers);
      importLora(model, new Map(src.weights.tensors));
      model.frozenLayers = parseLayerRange(freeze, model.config.numLayers);
    } else {
      model.setWeights(new Map(src.weights.tensors), 'transfer source checkpoint');
      if (config.lora.r > 0) attachFromConfig(model, config.lora, config.seed, freeze);
      else freezeLayers(model, freeze);
    }
  } else if (config.lora.r > 0) {
    if (!model.lora) attachFromConfig(model, config.lora, config.seed, freeze);
  } else {
    if (model.lora)
      throw new Error('lora.r is 0 (full fine-tuning) but the model has LoRA adapters; detach them or set lora.r > 0');
    freezeLayers(model, freeze);
  }
  applyMemorySettings(model, config);
  return describe(model, learningRate);
}

function describe(model: TransformerModel, learningRate: number): PreparedModel {
  return {
    learningRate,
    frozenLayers: [...model.frozenLayers].sort((a, b) => a - b),
    lora: model.lora ? structuredClone(model.lora) : null,
  };
}

/** Rebuilds the adapter layout and frozen layers a checkpoint was taken with (weights are loaded after). */
export function prepareResumed(model: TransformerModel, config: RunConfig, setup: PreparedModel): PreparedModel {
  if (model.lora) throw new Error('resume: the model already has LoRA adapters; pass the plain base model');
  const all = model.layers.map((_, i) => i);
  const lora = setup.lora;
  if (lora) {
    const without = all.filter((i) => !lora.layers.includes(i));
    attachLora(model, {
      r: lora.r,
      alpha: lora.alpha,
      dropout: lora.dropout,
      targetModules: lora.targetModules,
      freezeLayers: without.length > 0 ? without.join(',') : null,
      seed: config.seed,
    });
  }
  model.frozenLayers = new Set(setup.frozenLayers);
  applyMemorySettings(model, config);
  return describe(model, setup.learningRate);
}
