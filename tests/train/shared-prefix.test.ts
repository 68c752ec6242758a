import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { tokenStats } from '../../src/model/logprobs.ts';
import { packBatch, type TrainSample } from '../../src/train/batch.ts';
import { packSharingPrefixes, type TrainingBatch } from '../../src/train/shared-prefix.ts';
import { tinyModel, useWasm } from './helpers.ts';

beforeAll(useWasm);

const PAD = 0;
/** A sample: prompt tokens (untrained), then turns alternating trained and untrained (a tool's reply). */
function sample(prompt: number[], ...turns: number[][]): TrainSample {
  const tokens = [...prompt];
  const mask: number[] = prompt.map(() => 0);
  turns.forEach((turn, i) => {
    tokens.push(...turn);
    mask.push(...turn.map(() => (i % 2 === 0 ? 1 : 0)));
  });
  return {
    tokens,
    mask,
    oldLogp: tokens.map((_, t) => -0.1 * (t % 7)),
    advantages: mask.map((m, t) => m * (t % 3 === 0 ? 1 : -0.5)),
  };
}

const A = [1, 2, 3, 4, 5];
const B = [1, 2, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];

describe('packSharingPrefixes', () => {
  it('runs each distinct prompt once; every row keeps what follows the position its first trained token is read from', () => {
    const rows = [sample(A, [9, 10, 11]), sample(B, [3, 3]), sample(A, [12, 13], [4, 4], [5])];
    const packed = packSharingPrefixes(rows, PAD, 64);
    expect(packed.prefix).toEqual({
      ids: [[1, 2, 3, 4, PAD, PAD, PAD, PAD, PAD, PAD, PAD], B.slice(0, 11)],
      lengths: [4, 11],
      rowPrefix: [0, 1, 0],
    });
    expect(packed.ids).toEqual([
      [5, 9, 10, 11, PAD, PAD],
      [15, 3, 3, PAD, PAD, PAD],
      [5, 12, 13, 4, 4, 5],
    ]);
    // The shifted per-token arrays are the plain packing's, less each row's prefix.
    const plain = packBatch(rows, PAD, 64);
    const row = (p: { T: number; mask: Float32Array }, b: number, from: number, n: number) =>
      Array.from(p.mask.subarray(b * (p.T - 1) + from, b * (p.T - 1) + from + n));
    expect(row(packed, 2, 0, 5)).toEqual(row(plain, 2, 4, 5));
    expect(row(packed, 1, 0, 2)).toEqual(row(plain, 1, 11, 2));
    expect(packed.tokenCount).toBe(plain.tokenCount);
  });

  it('packs plainly when no two rows share a prompt, or a row trains from its first token', () => {
    expect(packSharingPrefixes([sample(A, [9]), sample(B, [9])], PAD, 64).prefix).toBeNull();
    const fromFirst = { tokens: [1, 2, 3], mask: [0, 1, 1] };
    expect(packSharingPrefixes([sample(A, [9]), sample(A, [8]), fromFirst], PAD, 64).prefix).toBeNull();
  });
});

/** The GRPO-shaped loss of a packed batch and its gradients, as host arrays. */
function lossAndGrads(model: ReturnType<typeof tinyModel>, c: TrainingBatch): Float32Array[] {
  const vars = model.trainableVariables();
  return tf.tidy(() => {
    const W = c.T - 1;
    const mask = tf.tensor2d(c.mask, [c.B, W]);
    const adv = tf.tensor2d(c.advantages, [c.B, W]);
    const ids = tf.tensor2d(c.ids, [c.B, c.T], 'int32');
    const prefix = c.prefix
      ? { ids: tf.tensor2d(c.prefix.ids, undefined, 'int32'), lengths: c.prefix.lengths, rowPrefix: c.prefix.rowPrefix }
      : undefined;
    const { value, grads } = tf.variableGrads(() => {
      const s = tokenStats(model, ids, { active: mask, prefix, temperature: 0.7 });
      const policy = tf.mul(tf.mul(tf.exp(s.logprobs), adv), mask);
      return tf.add(tf.sum(policy), tf.mul(0.01, tf.sum(tf.mul(s.entropy, mask)))).neg() as tf.Scalar;
    }, vars);
    return [value, ...vars.map((v) => grads[v.name])].map((t) => t.dataSync() as Float32Array);
  });
}

describe('a shared prefix in the update', () => {
  it('gives the loss and gradients of the plain packing, across prompts of different lengths and rows past the window', () => {
    const model = tinyModel();
    // Fresh LoRA has B = 0, so A would get no gradient: give every adapter weight a value.
    model.trainableVariables().forEach((v, i) => v.assign(tf.randomNormal(v.shape, 0, 0.05, 'float32', i + 1)));
    const long = Array.from({ length: 40 }, (_, i) => 1 + (i % 13));
    const rows = [
      sample(A, [9, 10, 11, 12], [4, 4], [7, 7, 7]),
      sample(long, [3, 3]),
      sample(A, [12, 13]),
      sample(long, [5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]),
      sample(A, [14, 15, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]),
    ];
    const shared = packSharingPrefixes(rows, PAD, model.config.maxPositions);
    expect(shared.prefix?.lengths).toEqual([4, 39]);
    // The long prompt's rows are padded to the longest suffix: their padding runs past the 64 positions.
    expect(39 + shared.T).toBeGreaterThan(model.config.maxPositions);
    const plain = lossAndGrads(model, { ...packBatch(rows, PAD, model.config.maxPositions), prefix: null });
    const viaPrefix = lossAndGrads(model, shared);
    let largest = 0;
    plain.forEach((values, i) =>
      values.forEach((x, j) => (largest = Math.max(largest, Math.abs(x - viaPrefix[i][j])))),
    );
    expect(Math.abs(plain[0][0])).toBeGreaterThan(1e-3);
    expect(Math.max(...plain.slice(1).map((g) => Math.max(...g.map(Math.abs))))).toBeGreaterThan(1e-4);
    expect(largest).toBeLessThan(1e-5);
    model.dispose();
  });
});
