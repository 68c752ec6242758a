import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { loraLinear, mm } from '../../src/model/ops.ts';
import { expectClose, useBackend } from './helpers.ts';

const SCALE = 2;

/** The projection as separate ops: what autodiff differentiated before loraLinear. */
function composite(x: tf.Tensor, w: tf.Tensor2D, bias: tf.Tensor, a: tf.Tensor2D, b: tf.Tensor2D): tf.Tensor {
  return tf.add(tf.add(mm(x, w), bias), tf.mul(mm(mm(x, a), b), SCALE));
}

describe.each(['wasm', 'cpu'] as const)('loraLinear on %s', (backend) => {
  it('gives the composite projection bit for bit, and its gradients for x, A and B', async () => {
    await useBackend(backend);
    const [x, w, bias, a, b, weights] = tf.tidy(() => [
      tf.randomNormal([2, 5, 12], 0, 1, 'float32', 1),
      tf.randomNormal([12, 8], 0, 0.3, 'float32', 2) as tf.Tensor2D,
      tf.randomNormal([8], 0, 0.1, 'float32', 3),
      tf.randomNormal([12, 4], 0, 0.3, 'float32', 4) as tf.Tensor2D,
      tf.randomNormal([4, 8], 0, 0.3, 'float32', 5) as tf.Tensor2D,
      tf.randomNormal([2, 5, 8], 0, 1, 'float32', 6),
    ]);
    const loss = (f: typeof composite) => (xi: tf.Tensor, ai: tf.Tensor, bi: tf.Tensor) =>
      tf.sum(tf.mul(f(xi, w, bias, ai as tf.Tensor2D, bi as tf.Tensor2D), weights));
    const fused = (xi: tf.Tensor, wi: tf.Tensor2D, bi: tf.Tensor, ai: tf.Tensor2D, b2: tf.Tensor2D) =>
      loraLinear(xi, wi, bi, ai, b2, SCALE);
    expect(Array.from(tf.tidy(() => fused(x, w, bias, a, b).dataSync()))).toEqual(
      Array.from(tf.tidy(() => composite(x, w, bias, a, b).dataSync())),
    );
    const expected = tf.tidy(() =>
      tf
        .grads(loss(composite))([x, a, b])
        .map((g) => g.dataSync()),
    );
    const actual = tf.tidy(() =>
      tf
        .grads(loss(fused))([x, a, b])
        .map((g) => g.dataSync()),
    );
    ['x', 'A', 'B'].forEach((name, i) => expectClose(actual[i], expected[i], `d${name}`, 1e-5, 1e-5));
    tf.dispose([x, w, bias, a, b, weights]);
  });
});
