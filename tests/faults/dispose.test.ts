/**
 * Faults: a model that is built, loaded or given an adapter and then disposed leaves no tensor behind
 * (11 per model and 2 per adapted module used to stay, so a long-lived engine grew with every load);
 * nor does a trainer with its LoRA and optimizer state after an update.
 */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ByteTokenizer } from '../../src/tokenizer/byte-tokenizer.ts';
import { presetConfig } from '../../src/model/config.ts';
import { loadHfModel, saveModel } from '../../src/hub/hf.ts';
import { attachLora, detachLora } from '../../src/model/lora.ts';
import { TransformerModel } from '../../src/model/transformer.ts';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import { Trainer } from '../../src/train/trainer.ts';
import { useBackend } from '../model/helpers.ts';

const config = presetConfig('nano', 266, {
  hiddenSize: 16,
  intermediateSize: 32,
  numLayers: 2,
  numHeads: 2,
  numKvHeads: 1,
  headDim: 8,
  maxPositions: 32,
});

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

describe('a trainer frees what it made', () => {
  beforeAll(() => useBackend('cpu'));

  it('trainer (LoRA attached, optimizer state) + dispose, then the model: back to the start', async () => {
    const before = tf.memory().numTensors;
    const model = TransformerModel.create(config, 1);
    const trainer = new Trainer({
      model,
      config: structuredClone(DEFAULT_CONFIG),
      padId: 264,
      collectGroups: () => Promise.reject(new Error('no rollouts')),
    });
    await trainer.sftTrain([{ tokens: [1, 2, 3, 4], mask: [0, 1, 1, 1] }], 1);
    trainer.dispose();
    model.dispose();
    expect(tf.memory().numTensors).toBe(before);
  });
});
