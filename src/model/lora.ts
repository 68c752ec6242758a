/**
 * LoRA adapters (Hu et al. 2021) on the transformer's linear layers, PEFT-compatible:
 * y = x·W + (alpha / r) · dropout(x)·A·B, with A initialised like PEFT (kaiming-uniform, a=√5,
 * i.e. U(±1/√in)) and B at zero, so a fresh adapter leaves the model unchanged.
 *
 * Held as A [in, r] and B [r, out] (the transposes of PEFT's lora_A.weight [r, in] and
 * lora_B.weight [out, r]); export/import convert. Frozen layers (`lora.freeze_layers`)
 * get no adapters, like PEFT's `layers_to_transform`.
 */
import * as tf from '@tensorflow/tfjs';
import { createRng, deriveSeed, uniformArray } from '../rng.ts';
import { TARGET_MODULES, type HostTensors, type TargetModule, type TransformerModel } from './transformer.ts';

export interface LoraConfig {
  r: number;
  alpha: number;
  dropout: number;
  /** Module names as PEFT writes them: q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj. */
  targetModules: string[];
  /** Inclusive layer ranges whose weights stay frozen, e.g. '0-8' or '0-3,6'; null freezes none. */
  freezeLayers?: string | null;
  seed?: number;
}

const PEFT_PREFIX = 'base_model.model.';

/** Parses '0-8', '3', '0-3,6-7' (inclusive) into layer indices, checked against the model depth. */
export function parseLayerRange(spec: string | null | undefined, numLayers: number): Set<number> {
  const out = new Set<number>();
  if (spec == null || spec.trim() === '') return out;
  for (const part of spec.split(',')) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    if (!m)
      throw new Error(`freeze_layers: "${spec}" is not a layer range; write it like "0-8" or "0-3,6" (inclusive).`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (to < from || to >= numLayers) {
      throw new Error(`freeze_layers: range "${part.trim()}" is outside the model's layers 0-${numLayers - 1}.`);
    }
    for (let i = from; i <= to; i++) out.add(i);
  }
  return out;
}

function checkTargets(targets: string[]): TargetModule[] {
  for (const t of targets) {
    if (!(TARGET_MODULES as readonly string[]).includes(t)) {
      throw new Error(`LoRA target module "${t}" is unknown; choose from ${TARGET_MODULES.join(', ')}.`);
    }
  }
  return targets as TargetModule[];
}

/** Freezes the base model and adds fresh adapters on the target modules of the non-frozen layers. */
export function attachLora(model: TransformerModel, config: LoraConfig): void {
  if (model.lora) throw new Error('The model already has LoRA adapters: merge or detach them first.');
  if (!Number.isInteger(config.r) || config.r <= 0)
    throw new Error(`LoRA r must be a positive integer, got ${config.r}.`);
  if (!(config.dropout >= 0 && config.dropout < 1))
    throw new Error(`LoRA dropout must be in [0, 1), got ${config.dropout}.`);
  const targets = checkTargets(config.targetModules);
  model.frozenLayers = parseLayerRange(config.freezeLayers, model.config.numLayers);
  const layers = model.layers.map((_, i) => i).filter((i) => !model.frozenLayers.has(i));
  const seed = config.seed ?? 0;
  for (const i of layers) {
    for (const m of targets) {
      const linear = model.layers[i][m];
      const [inDim, outDim] = linear.weight ? (linear.weight.shape as number[]) : (linear.half ?? linear.int8)!.shape;
      const a = uniformArray(
        createRng(deriveSeed(seed, i, TARGET_MODULES.indexOf(m))),
        inDim * config.r,
        1 / Math.sqrt(inDim),
      );
      // tidy frees the initial tensors; the variables keep the data (dispose() then frees everything).
      linear.lora = tf.tidy(() => ({
        A: tf.variable(tf.tensor2d(a, [inDim, config.r])),
        B: tf.variable(tf.zeros([config.r, outDim])),
      }));
    }
  }
  model.lora = { r: config.r, alpha: config.alpha, dropout: config.dropout, targetModules: targets, layers };
  model.loraEnabled = true;
}

/** Removes the adapters without touching the base weights. */
export function detachLora(model: TransformerModel): void {
  for (const layer of model.layers) {
    for (const m of TARGET_MODULES) {
      layer[m].lora?.A.dispose();
      layer[m].lora?.B.dispose();
      layer[m].lora = null;
    }
  }
  model.lora = null;
}

/** Adapter tensors under PEFT key names: lora_A.weight [r, in], lora_B.weight [out, r]. */
export async function exportLora(model: TransformerModel): Promise<HostTensors> {
  if (!model.lora) throw new Error('exportLora: the model has no LoRA adapters.');
  const out: HostTensors = new Map();
  for (const layer of model.layers) {
    for (const m of TARGET_MODULES) {
      const l = layer[m];
      if (!l.lora) continue;
      for (const [which, v] of [
        ['lora_A', l.lora.A],
        ['lora_B', l.lora.B],
      ] as const) {
        const t = tf.tidy(() => v.transpose());
        out.set(`${PEFT_PREFIX}${l.name}.${which}.weight`, {
          shape: t.shape.slice(),
          data: new Float32Array(await t.data()),
        });
        t.dispose();
      }
    }
  }
  return out;
}

/** Loads PEFT adapter tensors into the attached adapters; each must exist with the expected shape. */
export function importLora(model: TransformerModel, tensors: HostTensors): void {
  if (!model.lora) throw new Error('importLora: attach adapters first (attachLora with the adapter config).');
  const used = new Set<string>();
  for (const layer of model.layers) {
    for (const m of TARGET_MODULES) {
      const l = layer[m];
      if (!l.lora) continue;
      for (const [which, v] of [
        ['lora_A', l.lora.A],
        ['lora_B', l.lora.B],
      ] as const) {
        const key = `${PEFT_PREFIX}${l.name}.${which}.weight`;
        const expected = [v.shape[1], v.shape[0]];
        const entry = tensors.get(key);
        if (!entry)
          throw new Error(`LoRA adapter: tensor "${key}" is missing (expected shape [${expected.join(', ')}]).`);
        if (entry.shape.length !== 2 || entry.shape[0] !== expected[0] || entry.shape[1] !== expected[1]) {
          throw new Error(
            `LoRA adapter: tensor "${key}" has shape [${entry.shape.join(', ')}], expected [${expected.join(', ')}].`,
          );
        }
        tf.tidy(() => v.assign(tf.tensor2d(entry.data, entry.shape as [number, number]).transpose()));
        used.add(key);
      }
    }
  }
  const extra = [...tensors.keys()].filter((k) => !used.has(k));
  if (extra.length > 0) {
    throw new Error(
      `LoRA adapter: ${extra.length} tensor(s) match no adapter of this model, e.g. "${extra[0]}" (check r, target_modules and frozen layers).`,
    );
  }
}

/**
 * Full fine-tuning: keeps the given layer ranges (e.g. '0-8') out of `trainableVariables()`, and widens
 * the other layers' half-precision projections to float32, since they train.
 */
export function freezeLayers(model: TransformerModel, spec: string | null): void {
  model.frozenLayers = parseLayerRange(spec, model.config.numLayers);
  model.widenHalfLinears(model.layers.map((_, i) => i).filter((i) => !model.frozenLayers.has(i)));
}
