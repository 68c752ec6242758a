/**
 * The frozen base in int8 (src/model/int8.ts): per-output-channel quantization, the logits of an int8
 * base against float32, gradients through the int8 product, and a LoRA GRPO update on an int8 base.
 *
 * Tolerance of the logits: round-to-nearest moves each weight by at most half a step, absmax/254 of its
 * output channel, so each product is off by a fraction of a percent, compounding over the layers. On
 * the tiny model below with its init weights 5× larger (logits up to about 2.8, so they are not all near
 * zero) the int8 logits were 0.96% of the largest logit off at worst and 1.0% in RMS (0.13% / 0.18% at
 * the init scale itself, 2.7% / 1.9% at 10×); the check allows 2% for both, and the next-token argmax
 * must agree at ≥ 90% of positions.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { dequantizeInt8Host, int8MatMul, int8Weight, quantizeInt8Host } from '../../src/model/int8.ts';
import { generate } from '../../src/model/sampling.ts';
import { attachLora } from '../../src/model/lora.ts';
import { tokenStats } from '../../src/model/logprobs.ts';
import type { ModelConfig } from '../../src/model/config.ts';
import { TransformerModel } from '../../src/model/transformer.ts';
import { Optimizer } from '../../src/train/optimizer.ts';
import { grpoUpdate } from '../../src/train/update.ts';
import { createRng, normalArray } from '../../src/rng.ts';
import { expectClose, useBackend } from './helpers.ts';

const tiny: ModelConfig = {
  vocabSize: 60,
  hiddenSize: 32,
  intermediateSize: 48,
  numLayers: 3,
  numHeads: 4,
  numKvHeads: 2,
  headDim: 8,
  maxPositions: 64,
  ropeTheta: 10000,
  rmsNormEps: 1e-5,
  tieWordEmbeddings: true,
  attentionBias: true,
  family: 'qwen2',
};
const tokens = [
  [1, 5, 9, 2, 7, 3, 8, 4, 10, 20, 30, 40],
  [6, 6, 1, 0, 2, 9, 11, 12, 13, 14, 15, 16],
];

/** A float model with weights 5× the init scale (logits of a few units) and its int8 twin from the same weights. */
async function twins(): Promise<{ float: TransformerModel; int8: TransformerModel }> {
  const seedModel = TransformerModel.create(tiny, 9);
  const weights = await seedModel.getWeights();
  seedModel.dispose();
  for (const [name, t] of weights) if (!name.includes('norm')) t.data = t.data.map((v) => v * 5);
  return {
    float: TransformerModel.fromWeights(tiny, weights),
    int8: TransformerModel.fromWeights(tiny, weights, 'test', null, 'int8'),
  };
}

describe.each(['cpu', 'wasm'] as const)('int8 base on %s', (backend) => {
  it('quantizes per output channel within half a step, and widens to the same values on the backend', async () => {
    await useBackend(backend);
    const [inDim, outDim] = [7, 10]; // 10 outputs: the last int32 word holds two codes and two zeros
    const values = normalArray(createRng(1), inDim * outDim, 1).map((v, i) => v * (1 + (i % outDim))); // channels of different scales
    const { words, scales } = quantizeInt8Host(values, inDim, outDim);
    const back = dequantizeInt8Host(words, scales, inDim, outDim);
    for (let i = 0; i < values.length; i++)
      expect(Math.abs(back[i] - values[i])).toBeLessThanOrEqual(scales[i % outDim] / 2 + 1e-6);
    const w = int8Weight(values, inDim, outDim);
    const x = tf.tensor2d(normalArray(createRng(2), 3 * inDim, 1), [3, inDim]);
    const reference = tf.matMul(x, tf.tensor2d(back, [inDim, outDim]));
    expectClose(int8MatMul(x, w).dataSync(), reference.dataSync(), 'int8 product', 1e-5, 1e-5);
    // The input gradient is dy · Wᵀ of the same dequantized W.
    const dy = tf.ones([3, outDim]);
    const [dx] = tf.grads((a: tf.Tensor) => int8MatMul(a, w))([x], dy);
    expectClose(
      dx.dataSync(),
      tf.matMul(dy, tf.tensor2d(back, [inDim, outDim]), false, true).dataSync(),
      'int8 input gradient',
      1e-5,
      1e-5,
    );
    tf.dispose([w.packed, w.scales, x, reference, dy, dx]);
  });

  it('generation on an int8 base: the same greedy tokens with and without the cache, alone and batched', async () => {
    await useBackend(backend);
    const { float, int8: model } = await twins();
    float.dispose();
    const opts = { maxNewTokens: 6, temperature: 0, seed: 1 };
    const cached = await generate(
      model,
      [
        [1, 2, 3],
        [4, 5, 6, 7, 8],
      ],
      opts,
    );
    const uncached = await generate(
      model,
      [
        [1, 2, 3],
        [4, 5, 6, 7, 8],
      ],
      { ...opts, useCache: false },
    );
    const alone = await generate(model, [[4, 5, 6, 7, 8]], opts);
    expect(cached.tokens).toEqual(uncached.tokens);
    expect(cached.tokens[1]).toEqual(alone.tokens[0]);
    model.dispose();
  });

  it('logits of the int8 base are within 2% of float32 (largest logit) and pick the same next token', async () => {
    await useBackend(backend);
    const { float, int8 } = await twins();
    const logits = (m: TransformerModel) => tf.tidy(() => m.forward(tokens).logits.dataSync() as Float32Array);
    const [a, b] = [logits(float), logits(int8)];
    const scale = a.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    expect(scale).toBeGreaterThan(1);
    expectClose(b, a, 'int8 logits', 0, 0.02);
    const rms = (f: (i: number) => number) => Math.sqrt(a.reduce((sum, _, i) => sum + f(i) ** 2, 0));
    expect(rms((i) => a[i] - b[i]) / rms((i) => a[i])).toBeLessThan(0.02);
    const V = tiny.vocabSize;
    let same = 0;
    for (let p = 0; p < a.length / V; p++) {
      const argmax = (l: Float32Array) =>
        l.subarray(p * V, (p + 1) * V).reduce((best, v, i, row) => (v > row[best] ? i : best), 0);
      if (argmax(a) === argmax(b)) same++;
    }
    expect(same / (a.length / V)).toBeGreaterThanOrEqual(0.9);
    // quantizeLinears on the float model gives the same int8 model as loading in int8.
    float.quantizeLinears();
    expect(Array.from(logits(float))).toEqual(Array.from(b));
    expect(float.quantized).toBe(true);
    // getWeights reads an int8 base back as its dequantized float32 values, in HF layout.
    const back = await int8.getWeights();
    expect(back.get('model.layers.0.mlp.down_proj.weight')!.shape).toEqual([32, 48]);
    float.dispose();
    int8.dispose();
  });

  it('a LoRA GRPO update runs on the int8 base (recomputing or not), moves the adapters only, and leaves no tensors', async () => {
    await useBackend(backend);
    const { float, int8: model } = await twins();
    float.dispose();
    attachLora(model, { r: 4, alpha: 8, dropout: 0, targetModules: ['q_proj', 'v_proj', 'down_proj'] });
    const base = await model.getWeights();
    const optimizer = new Optimizer(model.trainableVariables(), {
      kind: 'adamw',
      learningRate: 1e-2,
      warmupSteps: 0,
      weightDecay: 0,
      gradClip: 1,
    });
    const samples = tokens.map((t, s) => ({
      tokens: t,
      mask: t.map((_, i) => (i >= 4 ? 1 : 0)),
      oldLogp: t.map(() => -4),
      advantages: t.map((_, i) => (i >= 4 ? (s ? 1 : -1) : 0)),
    }));
    const update = () =>
      grpoUpdate(
        model,
        optimizer,
        samples,
        { accumSteps: 1, padId: 0, temperature: 1, dropoutSeed: 1 },
        { clipEpsilon: 0.2, clipEpsilonHigh: null, klBeta: 0.05, useReference: true },
      );
    const logp = () => tf.tidy(() => Array.from(tokenStats(model, tokens).logprobs.dataSync()));
    const before = logp();
    model.recompute = 'off';
    const first = await update();
    const tensors = tf.memory().numTensors;
    model.recompute = 'on';
    const second = await update();
    expect(tf.memory().numTensors).toBe(tensors);
    expect(Number.isFinite(first.loss) && Number.isFinite(second.loss)).toBe(true);
    expect(first.step.gradNorm).toBeGreaterThan(0);
    expect(logp()).not.toEqual(before);
    const after = await model.getWeights();
    for (const [name, t] of base) expect(Array.from(after.get(name)!.data), name).toEqual(Array.from(t.data));
    optimizer.dispose();
    model.dispose();
  });

  it('full fine-tuning of an int8 base is refused by name', async () => {
    await useBackend(backend);
    const { float, int8 } = await twins();
    expect(() => int8.trainableVariables()).toThrow(/held in int8 \(model.quantization: int8\): train with LoRA/);
    float.dispose();
    int8.dispose();
  });
});
