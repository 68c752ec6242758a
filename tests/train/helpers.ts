/** Shared helpers for the tensor tests of src/train: backend and a tiny model. */
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../../src/kernels/backend.ts';
import { presetConfig } from '../../src/model/config.ts';
import { attachLora } from '../../src/model/lora.ts';
import { TransformerModel } from '../../src/model/transformer.ts';

export async function useWasm(): Promise<void> {
  if (tf.getBackend() !== 'wasm') await initBackend({ forced: 'wasm' });
}

/** A 2-layer, 32-wide model on a 16-token vocabulary; with LoRA r=4 on every layer unless told otherwise. */
export function tinyModel(
  opts: { seed?: number; lora?: boolean; freezeLayers?: string | null } = {},
): TransformerModel {
  const cfg = presetConfig('nano', 16, {
    hiddenSize: 32,
    intermediateSize: 64,
    numLayers: 2,
    numHeads: 2,
    numKvHeads: 1,
    headDim: 16,
    maxPositions: 64,
  });
  const model = TransformerModel.create(cfg, opts.seed ?? 1);
  if (opts.lora ?? true) {
    attachLora(model, {
      r: 4,
      alpha: 8,
      dropout: 0,
      targetModules: ['q_proj', 'v_proj', 'up_proj', 'down_proj'],
      freezeLayers: opts.freezeLayers ?? null,
      seed: 3,
    });
  }
  return model;
}
