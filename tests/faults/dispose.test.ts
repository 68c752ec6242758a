/**
 * Faults: a model that is built, loaded or given an adapter and then disposed leaves no tensor behind
 * (11 per model and 2 per adapted module used to stay, so a long-lived engine grew with every load).
 */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ByteTokenizer } from '../../src/model/byte-tokenizer.ts';
import { presetConfig } from '../../src/model/config.ts';
import { loadHfModel, saveModel } from '../../src/model/hf.ts';
import { attachLora, detachLora } from '../../src/model/lora.ts';
import { TransformerModel } from '../../src/model/transformer.ts';
import { useBackend } from '../model/helpers.ts';

const config = presetConfig('nano', 266, { hiddenSize: 16, intermediateSize: 32, numLayers: 2, numHeads: 2, numKvHeads: 1, headDim: 8, maxPositions: 32 });

describe('dispose() frees every tensor it made', () => {
  beforeAll(() => useBackend('cpu'));

  it('create + dispose', () => {
    const before = tf.memory().numTensors;
    TransformerModel.create(config, 1).dispose();
    expect(tf.memory().numTensors).toBe(before);
  });

  it('create + LoRA + forward pass + detach + dispose', () => {
    const before = tf.memory().numTensors;
    const model = TransformerModel.create(config, 1);
    attachLora(model, { r: 2, alpha: 4, dropout: 0, targetModules: ['q_proj', 'v_proj'] });
    tf.tidy(() => {
      model.forward([[1, 2, 3]]);
    });
    detachLora(model);
    attachLora(model, { r: 2, alpha: 4, dropout: 0, targetModules: ['q_proj'] });
    model.dispose();
    expect(tf.memory().numTensors).toBe(before);
  });

  it('save + load from HF files + dispose', async () => {
    const made = TransformerModel.create(config, 1);
    const files = await saveModel(made, new ByteTokenizer());
    made.dispose();
    const before = tf.memory().numTensors;
    const loaded = await loadHfModel({ description: 'memory', read: async (name) => files.get(name) ?? null });
    loaded.model.dispose();
    expect(tf.memory().numTensors).toBe(before);
  });
});
