/**
 * The products the transformer is built from, on wasm (where they take their own paths: XNNPACK 2D
 * products, attention as a depthwise convolution) against tfjs's plain matMul and its gradients.
 */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { bmm, mm } from '../../src/model/ops.ts';
import { createRng } from '../../src/rng.ts';
import { expectClose, useBackend } from './helpers.ts';

function random(shape: number[], seed: number): tf.Tensor {
  const rng = createRng(seed);
  return tf.tensor(Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => rng.normal()), shape);
}

beforeAll(async () => {
  await useBackend('wasm');
});

describe('bmm', () => {
  // [2, 3] batch of [64, 32] · [32, 48]: large enough for the depthwise path; [2, 2, 1, 32] · [.., 32, 7] is generation's small path.
  for (const [aShape, bShape] of [[[2, 3, 64, 32], [2, 3, 32, 48]], [[2, 2, 1, 32], [2, 2, 32, 7]]]) {
    it(`matches matMul and its gradients for [${aShape}] · [${bShape}]`, () => {
      const a = random(aShape, 1);
      const b = random(bShape, 2);
      const weights = random([...aShape.slice(0, -1), bShape[bShape.length - 1]], 3); // a loss that weighs every output differently
      const loss = (f: (x: tf.Tensor, y: tf.Tensor) => tf.Tensor) => (x: tf.Tensor, y: tf.Tensor) => tf.sum(tf.mul(f(x, y), weights));
      expectClose(bmm(a, b).dataSync(), tf.matMul(a, b).dataSync(), 'value');
      const [da, db] = tf.grads(loss(bmm))([a, b]);
      const [ra, rb] = tf.grads(loss((x, y) => tf.matMul(x, y)))([a, b]);
      expect(da.shape).toEqual(a.shape);
      expect(db.shape).toEqual(b.shape);
      expectClose(da.dataSync(), ra.dataSync(), 'gradient of a');
      expectClose(db.dataSync(), rb.dataSync(), 'gradient of b');
    });

    it(`with transposeB, matches matMul(a, bᵀ) and its gradients for [${aShape}] · [${bShape}]ᵀ`, () => {
      const a = random(aShape, 4);
      const bT = random([...bShape.slice(0, -2), bShape[bShape.length - 1], bShape[bShape.length - 2]], 5); // [..., n, k]
      const weights = random([...aShape.slice(0, -1), bShape[bShape.length - 1]], 6);
      const loss = (f: (x: tf.Tensor, y: tf.Tensor) => tf.Tensor) => (x: tf.Tensor, y: tf.Tensor) => tf.sum(tf.mul(f(x, y), weights));
      expectClose(bmm(a, bT, true).dataSync(), tf.matMul(a, bT, false, true).dataSync(), 'value');
      const [da, db] = tf.grads(loss((x, y) => bmm(x, y, true)))([a, bT]);
      const [ra, rb] = tf.grads(loss((x, y) => tf.matMul(x, y, false, true)))([a, bT]);
      expect(db.shape).toEqual(bT.shape);
      expectClose(da.dataSync(), ra.dataSync(), 'gradient of a');
      expectClose(db.dataSync(), rb.dataSync(), 'gradient of b');
    });
  }
});

describe('mm', () => {
  it('matches matMul, and differentiates with respect to either operand alone', () => {
    const x = tf.variable(random([20, 16], 4));
    const w = tf.variable(random([16, 12], 5));
    const weights = random([20, 12], 6);
    expectClose(mm(x, w).dataSync(), tf.matMul(x, w).dataSync(), 'value');
    const f = () => tf.sum(tf.mul(mm(x, w), weights)) as tf.Scalar;
    const reference = tf.variableGrads(() => tf.sum(tf.mul(tf.matMul(x, w), weights)) as tf.Scalar, [x, w]).grads;
    const onlyX = tf.variableGrads(f, [x]).grads;
    const onlyW = tf.variableGrads(f, [w]).grads;
    expect(Object.keys(onlyX)).toEqual([x.name]);
    expectClose(onlyX[x.name].dataSync(), reference[x.name].dataSync(), 'gradient of x');
    expectClose(onlyW[w.name].dataSync(), reference[w.name].dataSync(), 'gradient of w');
  });

  it('never computes the gradient of an operand that is not trained (a frozen base weight under LoRA)', async () => {
    const x = tf.variable(random([20, 16], 7));
    const frozen = random([16, 12], 8);
    const profile = await tf.profile(() => {
      const { value, grads } = tf.variableGrads(() => tf.sum(mm(x, frozen)) as tf.Scalar, [x]);
      tf.dispose([value, ...Object.values(grads)]);
    });
    expect(profile.kernels.filter((k) => k.name === 'SpindleMatMul').length).toBe(2); // forward, and d/dx only
  });

  it('refuses batched operands, naming bmm', () => {
    expect(() => mm(tf.zeros([2, 3, 4]), tf.zeros([2, 4, 5]))).toThrow(/bmm/);
  });
});
