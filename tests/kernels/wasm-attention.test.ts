/**
 * The wasm attention kernel (src/kernels/wasm-attention.ts): generation's softmax(q·kᵀ·scale + bias)·v
 * against the same formula as tfjs ops, masked and not, with a mask per batch row and one shared; and a
 * row's outputs bit for bit the same whatever left padding (in multiples of 8) places it, although the
 * padding moves it between the kernel's bunches of query positions, which keep different numbers of keys.
 */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { causalAttention, fusedAttention, maskedSoftmax } from '../../src/model/ops.ts';
import { createRng } from '../../src/rng.ts';
import { expectClose, useBackend } from '../model/helpers.ts';

const MASKED = -1e9;

function random(shape: number[], seed: number): tf.Tensor {
  const rng = createRng(seed);
  return tf.tensor(
    Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => rng.normal()),
    shape,
  );
}

/** The causal mask [B, 1, 1, T, Tk] of rows left-padded by `pads[b]` keys (the queries are the last T keys). */
function causalMask(pads: number[], T: number, Tk: number): tf.Tensor {
  const bias = new Float32Array(pads.length * T * Tk);
  pads.forEach((pad, b) => {
    for (let t = 0; t < T; t++)
      for (let j = 0; j < Tk; j++) if (j > Tk - T + t || j < pad) bias[(b * T + t) * Tk + j] = MASKED;
  });
  return tf.tensor(bias, [pads.length, 1, 1, T, Tk]);
}

/** The formula as ops: q [B, G, rep·T, D], k, v [B, G, Tk, D], bias [B|1, 1, 1, T, Tk] or null. */
function composite(
  q: tf.Tensor,
  k: tf.Tensor,
  v: tf.Tensor,
  bias: tf.Tensor | null,
  scale: number,
  T: number,
): tf.Tensor {
  const [B, G, R, D] = q.shape;
  const Tk = k.shape[2]!;
  const scores = tf
    .mul(tf.matMul(q.reshape([B * G, R, D]), k.reshape([B * G, Tk, D]), false, true), scale)
    .reshape([B, G, R / T, T, Tk]);
  const masked = bias ? tf.add(scores, bias) : scores;
  return tf.matMul(tf.softmax(masked).reshape([B * G, R, Tk]), v.reshape([B * G, Tk, D])).reshape([B, G, R, D]);
}

beforeAll(async () => {
  await useBackend('wasm');
});

describe('wasm attention kernel', () => {
  it('matches the ops formula: a per-row causal mask over several bunches of queries, a shared one, and none', async () => {
    const [B, G, rep, T, D] = [3, 2, 2, 150, 8];
    const Tk = 160; // 10 cached positions before the 150 new ones
    const q = random([B, G, rep * T, D], 1);
    const k = random([B, G, Tk, D], 2);
    const v = random([B, G, Tk, D], 3);
    const scale = 1 / Math.sqrt(D);
    const perRow = causalMask([0, 3, 8], T, Tk); // padding within the cached 10, so that every query sees a key
    expectClose(
      await fusedAttention(q, k, v, perRow, scale, T)!.data(),
      await composite(q, k, v, perRow, scale, T).data(),
      'per-row mask',
      1e-5,
      1e-5,
    );
    const shared = causalMask([0], T, Tk).reshape([T, Tk]);
    expectClose(
      await fusedAttention(q, k, v, shared, scale, T)!.data(),
      await composite(q, k, v, shared.reshape([1, 1, 1, T, Tk]), scale, T).data(),
      'shared mask',
      1e-5,
      1e-5,
    );
    const one = q.slice([0, 0, 0, 0], [B, G, rep, D]); // one position per row (a decoding step), every key valid
    expectClose(
      await fusedAttention(one, k, v, null, scale, 1)!.data(),
      await composite(one, k, v, null, scale, 1).data(),
      'no mask',
      1e-5,
      1e-5,
    );
  });

  it('gives a row the same bits whatever left padding places it, across bunches that keep different keys', async () => {
    const [G, rep, D, n] = [2, 2, 8, 100]; // a 100-position prompt: alone padded to 104, batched to 104 + 8·m
    const scale = 1 / Math.sqrt(D);
    const rows = { q: random([1, G, rep, n, D], 4), k: random([1, G, n, D], 5), v: random([1, G, n, D], 6) };
    const placed = async (L: number) => {
      const pad = L - n;
      const padQ = tf.concat([tf.zeros([1, G, rep, pad, D]), rows.q], 3).reshape([1, G, rep * L, D]);
      const padK = tf.concat([tf.zeros([1, G, pad, D]), rows.k], 2);
      const padV = tf.concat([tf.zeros([1, G, pad, D]), rows.v], 2);
      const out = fusedAttention(padQ, padK, padV, causalMask([pad], L, L), scale, L)!.reshape([1, G, rep, L, D]);
      return Array.from(await out.slice([0, 0, 0, pad, 0], [1, G, rep, n, D]).data());
    };
    const alone = await placed(104);
    for (const L of [112, 136, 200]) expect(await placed(L), `padded to ${L}`).toEqual(alone);
  });
});

describe('wasm masked softmax (training attention probabilities)', () => {
  /** softmax(scores·scale + bias) as tfjs ops, scores [B, G, R, Tk], bias [B|1, 1, 1, T, Tk]. */
  const ops = (scores: tf.Tensor, bias: tf.Tensor, scale: number, T: number) => {
    const [B, G, R, Tk] = scores.shape;
    return tf.softmax(tf.add(tf.mul(scores, scale).reshape([B, G, R / T, T, Tk]), bias)).reshape(scores.shape);
  };

  it('matches the ops, with a mask per batch row and a shared one, and so does its gradient', () => {
    const [B, G, rep, T, Tk] = [3, 2, 2, 24, 32]; // 8 cached positions before the 24 new ones
    const scores = random([B, G, rep * T, Tk], 4) as tf.Tensor4D;
    const dy = random(scores.shape, 5);
    const scale = 0.3;
    const shared = causalMask([0], T, Tk);
    for (const [what, bias, biasArg] of [
      ['per-row mask', causalMask([0, 3, 8], T, Tk), null],
      ['shared mask', shared, shared.reshape([T, Tk])],
    ] as const) {
      const given = biasArg ?? bias;
      expectClose(
        maskedSoftmax(scores, given, scale).dataSync(),
        ops(scores, bias, scale, T).dataSync(),
        what,
        1e-6,
        1e-5,
      );
      // The gradient through a weighted sum, so that every row's Σ dy·y matters.
      const loss = (f: (s: tf.Tensor) => tf.Tensor) => tf.grad((s: tf.Tensor) => tf.sum(tf.mul(f(s), dy)))(scores);
      const fused = loss((s) => maskedSoftmax(s as tf.Tensor4D, given, scale));
      const reference = loss((s) => ops(s, bias, scale, T));
      expectClose(fused.dataSync(), reference.dataSync(), `${what}: gradient`, 1e-6, 1e-5);
    }
  });

  it('runs as one kernel forward and one backward, leaving its input as it was', async () => {
    const scores = random([2, 1, 8, 8], 6) as tf.Tensor4D;
    const before = scores.dataSync().slice();
    const bias = causalMask([0, 2], 8, 8);
    const gradient = tf.grad((s: tf.Tensor) => tf.sum(maskedSoftmax(s as tf.Tensor4D, bias, 1)));
    const kernels = (await tf.profile(() => gradient(scores))).kernels.map((k) => k.name);
    expect(kernels).toContain('SpindleMaskedSoftmax');
    expect(kernels).toContain('SpindleMaskedSoftmaxDx');
    expect(kernels).not.toContain('Softmax');
    expect(scores.dataSync()).toEqual(before);
  });
});

describe('wasm causal attention (training, with its gradient)', () => {
  it('matches the ops formula and its gradients: GQA, a mask per batch row over several bunches, and a shared mask', () => {
    const [B, G, rep, T, D] = [2, 2, 2, 136, 8]; // three bunches of queries: 64, 64 and 8 positions
    const pads = [0, 8];
    const q = random([B, G, rep * T, D], 7) as tf.Tensor4D;
    const k = random([B, G, T, D], 8) as tf.Tensor4D;
    const v = random([B, G, T, D], 9) as tf.Tensor4D;
    // A left-padded position's query sees no key at all (its output is unused, and the kernels' differ): left out.
    const seen = tf.tensor(
      Array.from({ length: q.size }, (_, i) =>
        Math.floor(i / D) % T >= pads[Math.floor(i / (G * rep * T * D))] ? 1 : 0,
      ),
      q.shape,
    );
    const dy = tf.mul(random(q.shape, 10), seen);
    const scale = 1 / Math.sqrt(D);
    for (const [what, bias] of [
      ['per-row mask', causalMask(pads, T, T)],
      ['shared mask', causalMask([0], T, T).reshape([T, T])],
    ] as const) {
      const five = bias.rank === 5 ? bias : bias.reshape([1, 1, 1, T, T]);
      const fused = (a: tf.Tensor, b: tf.Tensor, c: tf.Tensor) =>
        causalAttention(a as tf.Tensor4D, b as tf.Tensor4D, c as tf.Tensor4D, bias, scale, T)!;
      const ops = (a: tf.Tensor, b: tf.Tensor, c: tf.Tensor) => composite(a, b, c, five, scale, T);
      expectClose(tf.mul(fused(q, k, v), seen).dataSync(), tf.mul(ops(q, k, v), seen).dataSync(), what, 1e-5, 1e-5);
      const gradients = (f: typeof ops) =>
        tf.grads((a: tf.Tensor, b: tf.Tensor, c: tf.Tensor) => tf.sum(tf.mul(f(a, b, c), dy)))([q, k, v]);
      const [got, want] = [gradients(fused), gradients(ops)];
      ['q', 'k', 'v'].forEach((name, i) =>
        expectClose(got[i].dataSync(), want[i].dataSync(), `${what}: d${name}`, 1e-5, 1e-4),
      );
    }
  });

  it('gives the prompt kernel’s outputs bit for bit (the threads check compares its gradients on 1 and 2 threads: threads-check.ts)', () => {
    const [B, G, rep, T, D] = [1, 2, 2, 72, 8];
    const q = random([B, G, rep * T, D], 11) as tf.Tensor4D;
    const k = random([B, G, T, D], 12) as tf.Tensor4D;
    const v = random([B, G, T, D], 13) as tf.Tensor4D;
    const bias = causalMask([0], T, T).reshape([T, T]);
    expect(causalAttention(q, k, v, bias, 0.5, T)!.dataSync()).toEqual(
      fusedAttention(q, k, v, bias, 0.5, T)!.dataSync(),
    );
  });
});
