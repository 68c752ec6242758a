/**
 * Gradient checkpointing (src/model/recompute.ts): the gradients of a step that recomputes its blocks
 * equal those of the plain step, for LoRA (with dropout, whose seeded masks are drawn again alike) and
 * for full fine-tuning with frozen layers, on cpu and on wasm; the step leaves no tensors behind; and
 * 'auto' recomputes only where the memory estimate says the plain step would not fit.
 *
 * Exact: the recomputed forward pass runs the same kernels on the same values, and the backward pass
 * the same gradient kernels in the same order (one block's tape is the plain tape's slice for that
 * block), so the gradients are bitwise equal on cpu and wasm; the check asserts that. The same holds for
 * rows that continue a shared prefix (the training update's packing): a layer's prefix block and rows
 * block are one recomputed op there.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { fromHfConfig, type ModelConfig } from '../../src/model/config.ts';
import { attachLora, freezeLayers } from '../../src/model/lora.ts';
import { tokenStats } from '../../src/model/logprobs.ts';
import { estimateMemory, recomputeNeeded } from '../../src/model/memory.ts';
import { TransformerModel } from '../../src/model/transformer.ts';
import { createRng } from '../../src/rng.ts';
import { useBackend } from './helpers.ts';

const tiny: ModelConfig = {
  vocabSize: 50,
  hiddenSize: 32,
  intermediateSize: 48,
  numLayers: 3,
  numHeads: 4,
  numKvHeads: 2,
  headDim: 8,
  maxPositions: 128,
  ropeTheta: 10000,
  rmsNormEps: 1e-5,
  tieWordEmbeddings: true,
  attentionBias: true,
  family: 'qwen2',
};
const tokens = [
  [1, 5, 9, 2, 7, 3, 8, 4, 0, 0],
  [6, 6, 1, 0, 2, 9, 11, 12, 13, 14],
];
const keyValid = tokens.map((row, b) => row.map((_, t) => b === 1 || t < 8)); // row 0 right-padded

const positions = tokens.map((row) => row.map((_, t) => t));

/**
 * A GRPO-like loss (weighted log-probs plus entropy, the training path) plus one over a padded forward
 * pass (explicit positions and a per-row key mask: the recomputed block gets those tensors back too).
 */
function loss(model: TransformerModel): tf.Scalar {
  const { logprobs, entropy } = tokenStats(model, tokens, { dropoutSeed: 11 });
  const weights = tf.tensor2d(tokens.map((row) => row.slice(1).map((_, t) => (t % 3) - 1)));
  const { logits } = model.forward(tokens, { keyValid, positions, dropoutSeed: 12 }); // [B, T, V]
  const padded = tf.sum(tf.mul(tf.logSoftmax(logits), tf.randomNormal(logits.shape, 0, 1, 'float32', 3)));
  return tf.addN([tf.sum(tf.mul(logprobs, weights)), tf.mul(0.1, tf.sum(entropy)), padded]) as tf.Scalar;
}

/**
 * The update's loss shape over rows that continue two shared prefixes of different lengths (padded),
 * one row past the window's end, with LoRA dropout where the model has it.
 */
function prefixLoss(model: TransformerModel): tf.Scalar {
  const prefix = {
    ids: tf.tensor2d(
      [
        [1, 5, 9, 2, 7, 3],
        [6, 6, 1, 0, 0, 0],
      ],
      undefined,
      'int32',
    ),
    lengths: [6, 3],
    rowPrefix: [0, 1, 0, 1],
  };
  const rows = [
    [4, 8, 2, 9, 1],
    [3, 3, 7, 0, 0],
    [11, 12, 13, 14, 15],
    [2, 4, 0, 0, 0],
  ];
  const { logprobs, entropy } = tokenStats(model, rows, { dropoutSeed: 13, prefix });
  const weights = tf.tensor2d(rows.map((row, b) => row.slice(1).map((_, t) => ((t + b) % 3) - 1)));
  return tf.add(tf.sum(tf.mul(logprobs, weights)), tf.mul(0.1, tf.sum(entropy))) as tf.Scalar;
}

function gradients(
  model: TransformerModel,
  recompute: boolean,
  of: (model: TransformerModel) => tf.Scalar = loss,
): { value: number; grads: Float32Array[] } {
  model.recompute = recompute ? 'on' : 'off';
  const vars = model.trainableVariables();
  const { value, grads } = tf.variableGrads(() => of(model), vars);
  const out = { value: value.dataSync()[0], grads: vars.map((v) => grads[v.name].dataSync() as Float32Array) };
  tf.dispose([value, ...Object.values(grads)]);
  return out;
}

/** Tensors alive when the loss is computed, before the backward pass: what the forward pass keeps for it. */
function keptAtLoss(
  model: TransformerModel,
  recompute: 'on' | 'off',
  of: (model: TransformerModel) => tf.Scalar,
): number {
  model.recompute = recompute;
  let alive = 0;
  const { value, grads } = tf.variableGrads(() => {
    const l = of(model);
    alive = tf.memory().numTensors;
    return l;
  }, model.trainableVariables());
  tf.dispose([value, ...Object.values(grads)]);
  return alive;
}

function randomizeAdapters(model: TransformerModel): void {
  const rng = createRng(5);
  for (const v of model.trainableVariables())
    v.assign(
      tf.tensor(
        Float32Array.from({ length: v.size }, () => rng.normal() * 0.1),
        v.shape,
      ),
    );
}

function expectSameGradients(
  model: TransformerModel,
  what: string,
  of: (model: TransformerModel) => tf.Scalar = loss,
): void {
  const plain = gradients(model, false, of);
  const before = tf.memory().numTensors;
  const recomputed = gradients(model, true, of);
  expect(tf.memory().numTensors, `${what}: tensors left behind`).toBe(before);
  expect(recomputed.value).toBe(plain.value);
  expect(recomputed.grads).toHaveLength(plain.grads.length);
  recomputed.grads.forEach((g, k) =>
    expect(Array.from(g), `${what}: gradient ${k}`).toEqual(Array.from(plain.grads[k])),
  );
}

describe.each(['cpu', 'wasm'] as const)('gradient checkpointing on %s', (backend) => {
  it('LoRA gradients (dropout on) with recomputation equal those without', async () => {
    await useBackend(backend);
    const model = TransformerModel.create(tiny, 3);
    attachLora(model, {
      r: 4,
      alpha: 8,
      dropout: 0.2,
      targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
      freezeLayers: '0',
    });
    randomizeAdapters(model);
    expectSameGradients(model, 'LoRA');
    model.dispose();
  });

  it('full fine-tuning gradients (embeddings, norms, projections, biases; one layer frozen) are equal too', async () => {
    await useBackend(backend);
    const model = TransformerModel.create(tiny, 4);
    freezeLayers(model, '1');
    expectSameGradients(model, 'full');
    model.dispose();
  });

  it('rows continuing shared prefixes: LoRA (dropout on) and full fine-tuning gradients are equal too', async () => {
    await useBackend(backend);
    const lora = TransformerModel.create(tiny, 6);
    attachLora(lora, {
      r: 4,
      alpha: 8,
      dropout: 0.2,
      targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
    });
    randomizeAdapters(lora);
    // The blocks are recomputed after a prefix too: the forward pass keeps less.
    expect(keptAtLoss(lora, 'on', prefixLoss)).toBeLessThan(keptAtLoss(lora, 'off', prefixLoss));
    expectSameGradients(lora, 'LoRA after a prefix', prefixLoss);
    lora.dispose();
    const full = TransformerModel.create(tiny, 7);
    freezeLayers(full, '2');
    expectSameGradients(full, 'full after a prefix', prefixLoss);
    full.dispose();
  });
});

describe('when to recompute', () => {
  it("'auto' leaves small steps alone and recomputes where the plain step's estimate is over 3 GiB", async () => {
    await useBackend('cpu');
    expect(recomputeNeeded(tiny, { sequence: 10, batch: 2 })).toBe(false);
    const smol = fromHfConfig({
      model_type: 'llama',
      hidden_size: 576,
      intermediate_size: 1536,
      num_hidden_layers: 30,
      num_attention_heads: 9,
      num_key_value_heads: 3,
      head_dim: 64,
      vocab_size: 49152,
      max_position_embeddings: 8192,
      rms_norm_eps: 1e-5,
      rope_theta: 100000,
      tie_word_embeddings: true,
      hidden_act: 'silu',
    });
    expect(recomputeNeeded(smol, { sequence: 128 })).toBe(false);
    expect(recomputeNeeded(smol, { sequence: 512 })).toBe(true);
    const e = estimateMemory(smol, { sequence: 512 });
    expect(e.recompute).toBe(true);
    expect(e.trainPeakBytes).toBeLessThan(e.trainPeakPlainBytes / 2);
  });

  it('a recomputed step keeps fewer tensors alive at the end of its forward pass', async () => {
    await useBackend('cpu');
    const model = TransformerModel.create(tiny, 5);
    attachLora(model, { r: 2, alpha: 2, dropout: 0, targetModules: ['q_proj', 'down_proj'] });
    expect(keptAtLoss(model, 'on', loss)).toBeLessThan(keptAtLoss(model, 'off', loss));
    model.dispose();
  });
});
