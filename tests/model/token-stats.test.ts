/**
 * tokenStats's log-probs and entropies come from one op whose gradient recomputes the softmax from the
 * logits (src/model/logprobs.ts). Checked against autodiff through the composite ops it replaces
 * (slice, log-softmax, one-hot, the entropy's products), values and gradients, at temperature 1 and 0.7,
 * on cpu and wasm, within float32 rounding (1e-5 of the largest value: the formulas sum in another order).
 * On wasm the op is one kernel (wasm-token-stats.ts) that skips the positions a loss masks out: those
 * read 0 and add no gradient, and the rest equal the composite form's.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { tokenStats } from '../../src/model/logprobs.ts';
import type { ModelConfig } from '../../src/model/config.ts';
import { TransformerModel } from '../../src/model/transformer.ts';
import { expectClose, useBackend } from './helpers.ts';

const tiny: ModelConfig = {
  vocabSize: 30,
  hiddenSize: 16,
  intermediateSize: 24,
  numLayers: 1,
  numHeads: 2,
  numKvHeads: 1,
  headDim: 8,
  maxPositions: 32,
  ropeTheta: 10000,
  rmsNormEps: 1e-5,
  tieWordEmbeddings: false,
  attentionBias: false,
  family: 'llama',
};
const tokens = [
  [1, 5, 9, 2, 7, 3],
  [6, 6, 1, 0, 2, 29],
];

/** Which of the 2 × 5 positions a loss counts (the `active` option). */
const ACTIVE = [
  [0, 1, 1, 0, 1],
  [1, 1, 0, 0, 0],
];

/** The composite form tokenStats had before the fused op. */
function composite(model: TransformerModel, temperature: number): { logprobs: tf.Tensor; entropy: tf.Tensor } {
  const ids = tf.tensor2d(tokens, undefined, 'int32');
  const [B, T] = ids.shape;
  const V = tiny.vocabSize;
  const { logits } = model.forward(ids);
  const logp = tf.logSoftmax(tf.div(logits, temperature).slice([0, 0, 0], [B, T - 1, V]));
  const targets = tf.oneHot(ids.slice([0, 1], [B, T - 1]), V).toFloat();
  return { logprobs: tf.sum(tf.mul(logp, targets), -1), entropy: tf.neg(tf.sum(tf.mul(tf.exp(logp), logp), -1)) };
}

describe.each(['cpu', 'wasm'] as const)('tokenStats on %s', (backend) => {
  it.each([1, 0.7])('values and gradients equal the composite form (temperature %s)', async (temperature) => {
    await useBackend(backend);
    const model = TransformerModel.create(tiny, 3);
    const vars = model.trainableVariables();
    const weigh = (s: { logprobs: tf.Tensor; entropy: tf.Tensor }) =>
      tf.add(
        tf.sum(tf.mul(s.logprobs, tf.linspace(-1, 1, 10).reshape([2, 5]))),
        tf.mul(0.3, tf.sum(s.entropy)),
      ) as tf.Scalar;
    const run = (f: () => { logprobs: tf.Tensor; entropy: tf.Tensor }) => {
      const values = tf.tidy(() => {
        const s = f();
        return [s.logprobs.dataSync(), s.entropy.dataSync()];
      });
      const { value, grads } = tf.variableGrads(() => weigh(f()), vars);
      const out = { values, grads: vars.map((v) => grads[v.name].dataSync()) };
      tf.dispose([value, ...Object.values(grads)]);
      return out;
    };
    const fused = run(() => tokenStats(model, tokens, { temperature }));
    const reference = run(() => composite(model, temperature));
    fused.values.forEach((v, k) => expectClose(v, reference.values[k], `value ${k}`, 1e-6, 1e-5));
    expect(fused.grads).toHaveLength(reference.grads.length);
    fused.grads.forEach((g, k) => expectClose(g, reference.grads[k], `gradient of ${vars[k].name}`, 1e-6, 1e-5));
    model.dispose();
  });

  it('skips positions outside `active` (0, no gradient) and keeps the others', async () => {
    await useBackend(backend);
    const model = TransformerModel.create(tiny, 4);
    const vars = model.trainableVariables();
    const mask = tf.tensor2d(ACTIVE);
    const masked = (s: { logprobs: tf.Tensor; entropy: tf.Tensor }) =>
      tf.add(tf.sum(tf.mul(s.logprobs, mask)), tf.mul(0.3, tf.sum(tf.mul(s.entropy, mask)))) as tf.Scalar;
    const gradsOf = (f: () => { logprobs: tf.Tensor; entropy: tf.Tensor }) => {
      const { value, grads } = tf.variableGrads(() => masked(f()), vars);
      const out = vars.map((v) => grads[v.name].dataSync());
      tf.dispose([value, ...Object.values(grads)]);
      return out;
    };
    const all = tf.tidy(() => tokenStats(model, tokens, { temperature: 0.7, active: mask }).logprobs.dataSync());
    const kept = tf.tidy(() =>
      tf.mul(tokenStats(model, tokens, { temperature: 0.7, active: mask }).logprobs, mask).dataSync(),
    );
    const reference = tf.tidy(() => tf.mul(composite(model, 0.7).logprobs, mask).dataSync());
    if (backend === 'wasm') expect(Array.from(all).filter((_, i) => ACTIVE.flat()[i] === 0)).toEqual([0, 0, 0, 0, 0]);
    expectClose(kept, reference, 'log-probs at active positions', 1e-6, 1e-5);
    const fused = gradsOf(() => tokenStats(model, tokens, { temperature: 0.7, active: mask }));
    gradsOf(() => composite(model, 0.7)).forEach((g, k) =>
      expectClose(fused[k], g, `masked gradient of ${vars[k].name}`, 1e-6, 1e-5),
    );
    mask.dispose();
    model.dispose();
  });
});
