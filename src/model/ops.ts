/**
 * The few tensor operations the transformer is built from, written around two tfjs pitfalls
 * (notes/stack-facts.md §2):
 * - tfjs-wasm's BatchMatMul takes a slow path for transposed operands, and tfjs's own matMul
 *   gradient always uses them; `mm` has a custom gradient that transposes explicitly (≈3× faster
 *   training step on wasm).
 * - the gradient of `tf.gather` needs `UnsortedSegmentSum`, which wasm lacks; `embed` looks rows up
 *   with a one-hot matmul when the table needs a gradient.
 */
import * as tf from '@tensorflow/tfjs';

/** Swaps the last two axes: [..., m, n] → [..., n, m]. */
export function swapLast(x: tf.Tensor): tf.Tensor {
  const perm = [...Array(x.rank).keys()];
  [perm[x.rank - 2], perm[x.rank - 1]] = [perm[x.rank - 1], perm[x.rank - 2]];
  return tf.transpose(x, perm);
}

const matMulExplicitGrad = tf.customGrad((...inputs: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const [a, b, save] = inputs as [tf.Tensor, tf.Tensor, tf.GradSaveFunc];
  save([a, b]);
  return {
    value: tf.matMul(a, b),
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [sa, sb] = saved;
      return [tf.matMul(dy, swapLast(sb)), tf.matMul(swapLast(sa), dy)]; // [..., m, k], [..., k, n]
    },
  };
});

/** a [..., m, k] · b [..., k, n] → [..., m, n] (same batch dims), with an explicit-transpose gradient. */
export function mm(a: tf.Tensor, b: tf.Tensor): tf.Tensor {
  return matMulExplicitGrad(a, b);
}

/** Row lookup: ids [N] in table [V, C] → [N, C]. One-hot matmul when the table trains, gather otherwise. */
export function embed(table: tf.Tensor2D, ids: tf.Tensor1D, differentiable: boolean): tf.Tensor2D {
  if (!differentiable) return tf.gather(table, ids) as tf.Tensor2D; // [N, C]
  const oneHot = tf.oneHot(ids, table.shape[0]).toFloat(); // [N, V]
  return mm(oneHot, table) as tf.Tensor2D; // [N, C]
}

/** RMSNorm: x / sqrt(mean(x²) + eps) · weight, over the last axis. */
export function rmsNorm(x: tf.Tensor, weight: tf.Tensor1D, eps: number): tf.Tensor {
  const meanSquare = tf.mean(tf.square(x), -1, true); // [..., 1]
  return tf.mul(tf.mul(x, tf.rsqrt(tf.add(meanSquare, eps))), weight); // [..., C]
}

/** SiLU(x) = x · sigmoid(x). */
export function silu(x: tf.Tensor): tf.Tensor {
  return tf.mul(x, tf.sigmoid(x));
}

/** Rotary tables as in HF Llama: cos/sin of pos · invFreq[i] (rope.ts), the D/2 frequencies repeated twice. [P, D] each. */
export function ropeTables(maxPositions: number, headDim: number, invFreq: Float64Array): { cos: tf.Tensor2D; sin: tf.Tensor2D; rotate: tf.Tensor2D } {
  const half = headDim / 2;
  if (invFreq.length !== half) throw new Error(`ropeTables: ${invFreq.length} inverse frequencies for head_dim ${headDim}; expected ${half}.`);
  const cos = new Float32Array(maxPositions * headDim);
  const sin = new Float32Array(maxPositions * headDim);
  for (let p = 0; p < maxPositions; p++) {
    for (let i = 0; i < half; i++) {
      const angle = p * invFreq[i];
      cos[p * headDim + i] = cos[p * headDim + i + half] = Math.cos(angle);
      sin[p * headDim + i] = sin[p * headDim + i + half] = Math.sin(angle);
    }
  }
  // rotate_half(x) = [-x2, x1] as a fixed [D, D] matrix: one small matmul whose gradient every
  // backend has (slice/concat gradients are missing or slow on some of them).
  const rotate = new Float32Array(headDim * headDim);
  for (let j = 0; j < half; j++) {
    rotate[(j + half) * headDim + j] = -1;
    rotate[j * headDim + j + half] = 1;
  }
  return {
    cos: tf.tensor2d(cos, [maxPositions, headDim]),
    sin: tf.tensor2d(sin, [maxPositions, headDim]),
    rotate: tf.tensor2d(rotate, [headDim, headDim]),
  };
}

/** Applies RoPE: x·cos + rotate_half(x)·sin. x [B, H, T, D]; cos/sin broadcast as [T, D] or [B, 1, T, D]. */
export function applyRope(x: tf.Tensor4D, cos: tf.Tensor, sin: tf.Tensor, rotate: tf.Tensor2D): tf.Tensor4D {
  const [B, H, T, D] = x.shape;
  const rotated = mm(x.reshape([B * H * T, D]), rotate).reshape([B, H, T, D]); // [B, H, T, D]
  return tf.add(tf.mul(x, cos), tf.mul(rotated, sin)) as tf.Tensor4D;
}
