/**
 * The few tensor operations the transformer is built from, written around two tfjs pitfalls
 * (docs/architecture.md, kernels):
 * - tfjs-wasm's BatchMatMul takes a naive loop for transposed or batched operands, and tfjs's own
 *   matMul gradient always transposes; on wasm `mm` and `bmm` run kernels/wasm-matmul.ts's kernels instead,
 *   whose gradients read transposed operands by their strides.
 * - the gradient of `tf.gather` needs `UnsortedSegmentSum`, which wasm lacks; `embed` looks rows up
 *   with a one-hot matmul when the table needs a gradient.
 */
import * as tf from '@tensorflow/tfjs';
import { wasmAttentionFits } from '../kernels/wasm-attention.ts';
import {
  ATTENTION_KERNEL,
  CAUSAL_ATTENTION_DX_KERNEL,
  CAUSAL_ATTENTION_KERNEL,
  HALF_MATMUL_KERNEL,
  hasFusedKernel,
  MASKED_SOFTMAX_KERNEL,
  RMS_NORM_KERNEL,
  ROPE_KERNEL,
  SOFTMAX_KERNEL,
  SUM_SQUARES_KERNEL,
  SWIGLU_KERNEL,
} from '../kernels/fused.ts';
import { BATCH_MATMUL_KERNEL, MATMUL_KERNEL, product } from '../kernels/wasm-matmul.ts';

/**
 * a [..., k] · b [k, n] → [..., n]. On wasm through SpindleMatMul, which takes a as it is (no reshapes
 * around every product: they were a third of a decoding step's ops); other backends run transposed
 * products natively, so tfjs's own matMul and its (lazy) gradient are used.
 */
export function mm(a: tf.Tensor, b: tf.Tensor): tf.Tensor {
  const [k, n] = b.shape as [number, number];
  if (b.rank !== 2 || a.shape[a.rank - 1] !== k)
    throw new Error(`mm multiplies [..., k] by [k, n]; got shapes [${a.shape}] and [${b.shape}] (bmm takes batches).`);
  if (hasFusedKernel(MATMUL_KERNEL)) return product(MATMUL_KERNEL, a, b);
  if (a.rank === 2) return tf.matMul(a, b);
  return tf.matMul(a.reshape([-1, k]), b).reshape([...a.shape.slice(0, -1), n]);
}

/**
 * a [..., k] · bᵀ for b [n, k] → [..., n], without a transposed copy of b: a tied output head, h · Eᵀ.
 * Transposing the [V, C] embedding per training step cost a copy the size of the embedding, and its
 * gradient products more (memory.ts's head copies); the wasm kernel reads b by its strides.
 */
export function mmT(a: tf.Tensor, b: tf.Tensor): tf.Tensor {
  const [n, k] = b.shape as [number, number];
  if (b.rank !== 2 || a.shape[a.rank - 1] !== k)
    throw new Error(`mmT multiplies [..., k] by [n, k]ᵀ; got shapes [${a.shape}] and [${b.shape}]`);
  if (hasFusedKernel(MATMUL_KERNEL)) return product(MATMUL_KERNEL, a, b, { transposeB: true });
  return tf.matMul(a.reshape([-1, k]), b, false, true).reshape([...a.shape.slice(0, -1), n]);
}

/** aᵀ · b over their rows: a [..., m], b [..., n] with the same leading sizes → [m, n] (a weight's gradient). */
function mmTA(a: tf.Tensor, b: tf.Tensor): tf.Tensor2D {
  const [m, n] = [a.shape[a.rank - 1], b.shape[b.rank - 1]];
  if (hasFusedKernel(MATMUL_KERNEL)) return product(MATMUL_KERNEL, a, b, { transposeA: true }) as tf.Tensor2D;
  return tf.matMul(a.reshape([-1, m]), b.reshape([-1, n]), true, false);
}

/**
 * A LoRA projection's training forward, x·W (+ bias) + scale·(x·A)·B with W and the bias frozen, as one
 * op. Autodiff kept the base product, the adapter's output, its scaled copy and the sum (four activations
 * of the projection's width) until the backward pass ended; this keeps the output and x·A ([..., r]), and
 * its gradient reads x, x·A and the weights. The forward's arithmetic, order included, is the unfused one's
 * (the decoding kernel's too), so log-probabilities do not move.
 */
export function loraLinear(
  x: tf.Tensor,
  w: tf.Tensor2D,
  bias: tf.Tensor | null,
  a: tf.Tensor2D,
  b: tf.Tensor2D,
  scale: number,
): tf.Tensor {
  const op = tf.customGrad(((input: tf.Tensor, loraA: tf.Tensor2D, loraB: tf.Tensor2D, save: tf.GradSaveFunc) => {
    const xa = mm(input, loraA); // [..., r]
    save([input, xa]);
    const base = bias ? tf.add(mm(input, w), bias) : mm(input, w);
    return {
      value: tf.add(base, tf.mul(mm(xa, loraB), scale)),
      gradFunc: (dy: tf.Tensor, [savedX, savedXa]: tf.Tensor[]) => {
        const dXa = tf.mul(mmT(dy, loraB), scale); // [..., r]
        return [tf.add(mmT(dy, w), mmT(dXa, loraA)), mmTA(savedX, dXa), tf.mul(mmTA(savedXa, dy), scale)];
      },
    };
  }) as unknown as Parameters<typeof tf.customGrad>[0]);
  return op(x, a, b) as tf.Tensor;
}

/** x [..., k] · W for a half-precision weight W [k, n] (transformer.ts's HalfWeight) on a backend with the kernel. */
export function halfMatMul(
  x: tf.Tensor,
  w: { packed: tf.Tensor2D; format: string; shape: [number, number] },
): tf.Tensor {
  const [k, n] = w.shape;
  if (x.shape[x.rank - 1] !== k) throw new Error(`halfMatMul: [${x.shape}] · [${k}, ${n}]: inner sizes differ`);
  return tf
    .engine()
    .runKernel(HALF_MATMUL_KERNEL, { a: x, w: w.packed }, { format: w.format, transposeW: false }) as tf.Tensor;
}

/**
 * a [..., m, k] · b [..., k, n] → [..., m, n] over equal leading axes (attention's products); with
 * `transposeB`, b is [..., n, k] and the product is a · bᵀ (q·kᵀ without copying the key cache into a
 * transposed tensor every decoding step).
 */
export function bmm(a: tf.Tensor, b: tf.Tensor, transposeB = false): tf.Tensor {
  return hasFusedKernel(BATCH_MATMUL_KERNEL)
    ? product(BATCH_MATMUL_KERNEL, a, b, { transposeB })
    : tf.matMul(a, b, false, transposeB);
}

/** Row lookup: ids [N] in table [V, C] → [N, C]. One-hot matmul when the table trains, gather otherwise. */
export function embed(table: tf.Tensor2D, ids: tf.Tensor1D, differentiable: boolean): tf.Tensor2D {
  if (!differentiable) return tf.gather(table, ids) as tf.Tensor2D; // [N, C]
  const oneHot = tf.oneHot(ids, table.shape[0]).toFloat(); // [N, V]
  return mm(oneHot, table) as tf.Tensor2D; // [N, C]
}

/** RMSNorm: x / sqrt(mean(x²) + eps) · weight, over the last axis. */
export function rmsNorm(x: tf.Tensor, weight: tf.Tensor1D, eps: number): tf.Tensor {
  if (hasFusedKernel(RMS_NORM_KERNEL))
    return tf.engine().runKernel(RMS_NORM_KERNEL, { x, weight }, { eps }) as tf.Tensor;
  const meanSquare = tf.mean(tf.square(x), -1, true); // [..., 1]
  return tf.mul(tf.mul(x, tf.rsqrt(tf.add(meanSquare, eps))), weight); // [..., C]
}

/** Keys up to which the fused attention kernel holds a row's scores (kernels/webgpu/attention.ts's MAX_KEYS). */
const FUSED_ATTENTION_MAX_KEYS = 2048;

/**
 * softmax(q·kᵀ·scale + bias)·v in one kernel, for generation on a backend that has it (WebGPU; wasm where
 * keys and heads are whole vectors of 4, kernels/wasm-attention.ts) and at most FUSED_ATTENTION_MAX_KEYS keys;
 * null otherwise, and the caller runs the products and softmax.
 * q [B, G, R, D] with row r of a group at position r mod `positions`; k, v [B, G, Tk, D].
 */
export function fusedAttention(
  q: tf.Tensor,
  k: tf.Tensor,
  v: tf.Tensor,
  bias: tf.Tensor | null,
  scale: number,
  positions: number,
): tf.Tensor | null {
  if (k.shape[2]! > FUSED_ATTENTION_MAX_KEYS || !hasFusedKernel(ATTENTION_KERNEL)) return null;
  if (tf.getBackend() === 'wasm' && !wasmAttentionFits(k.shape[2]!, q.shape[3]!)) return null;
  const inputs: tf.NamedTensorMap = bias ? { q, k, v, bias } : { q, k, v };
  return tf.engine().runKernel(ATTENTION_KERNEL, inputs, { scale, positions }) as tf.Tensor;
}

/**
 * Training's attention, softmax(q·kᵀ·scale + bias)·v over a whole sequence (the T queries are the T keys;
 * bias is the causal mask, [T, T] or [B, 1, 1, T, T]), as one kernel and one for its gradient where the
 * backend has them (wasm, keys and heads in whole vectors of 4: kernels/wasm-attention-train.ts); null otherwise,
 * and the caller runs the products and softmax. q [B, G, R, D] with row r of a group at position r mod T.
 */
export function causalAttention(
  q: tf.Tensor4D,
  k: tf.Tensor4D,
  v: tf.Tensor4D,
  bias: tf.Tensor,
  scale: number,
  positions: number,
): tf.Tensor4D | null {
  if (!hasFusedKernel(CAUSAL_ATTENTION_KERNEL) || k.shape[2] !== positions || !wasmAttentionFits(positions, q.shape[3]))
    return null;
  const attrs = { scale, positions };
  const op = tf.customGrad(((
    qIn: tf.Tensor,
    kIn: tf.Tensor,
    vIn: tf.Tensor,
    mask: tf.Tensor,
    save: tf.GradSaveFunc,
  ) => {
    const [out, probabilities] = tf
      .engine()
      .runKernel(CAUSAL_ATTENTION_KERNEL, { q: qIn, k: kIn, v: vIn, bias: mask }, attrs) as tf.Tensor[];
    save([qIn, kIn, vIn, mask, probabilities]);
    return {
      value: out,
      gradFunc: (dy: tf.Tensor, [sq, sk, sv, sMask, sP]: tf.Tensor[]) => {
        const grads = tf
          .engine()
          .runKernel(
            CAUSAL_ATTENTION_DX_KERNEL,
            { dy, q: sq, k: sk, v: sv, bias: sMask, probabilities: sP },
            attrs,
          ) as tf.Tensor[];
        return [...grads, tf.zerosLike(sMask)]; // a mask is a constant: nothing trains through it
      },
    };
  }) as unknown as Parameters<typeof tf.customGrad>[0]);
  return op(q, k, v, bias) as tf.Tensor4D;
}

/**
 * Σ of every element squared over all `tensors`: one kernel where the backend has it (wasm), else a
 * square and a sum per tensor, added pairwise (not with addN: WebGPU's AddN binds every input at once,
 * and past the adapter's storage buffers per shader, 8 on many, its pipeline is invalid and the sum
 * silently wrong).
 */
export function sumOfSquares(tensors: tf.Tensor[]): tf.Scalar {
  if (hasFusedKernel(SUM_SQUARES_KERNEL))
    return tf
      .engine()
      .runKernel(SUM_SQUARES_KERNEL, Object.fromEntries(tensors.map((t, i) => [`x${i}`, t]))) as tf.Scalar;
  return tensors.map((t) => tf.sum(tf.square(t))).reduce((a, b) => tf.add(a, b)) as tf.Scalar;
}

/**
 * Attention's probabilities softmax(scores·scale + bias) over the last axis: scores [B, G, R, Tk] with row r
 * of a group at position r mod T, bias [T, Tk] | [B, 1, 1, T, Tk]. One kernel where the backend has it
 * (wasm, keys in whole vectors of 4: kernels/wasm-attention.ts), its gradient one more; else a scale, an add and a
 * softmax.
 */
export function maskedSoftmax(scores: tf.Tensor4D, bias: tf.Tensor, scale: number): tf.Tensor4D {
  if (hasFusedKernel(MASKED_SOFTMAX_KERNEL) && scores.shape[3] % 4 === 0)
    return tf.engine().runKernel(MASKED_SOFTMAX_KERNEL, { scores, bias }, { scale }) as tf.Tensor4D;
  const [B, G, R, Tk] = scores.shape;
  const T = bias.shape[bias.shape.length - 2];
  return softmax(
    tf.add(tf.mul(scores, scale).reshape([B, G, R / T, T, Tk]), bias).reshape([B, G, R, Tk]),
  ) as tf.Tensor4D;
}

/** Softmax over the last axis (attention's probabilities), with a fused gradient where the backend has one. */
export function softmax(x: tf.Tensor): tf.Tensor {
  return hasFusedKernel(SOFTMAX_KERNEL)
    ? (tf.engine().runKernel(SOFTMAX_KERNEL, { logits: x }, {}) as tf.Tensor)
    : tf.softmax(x);
}

/**
 * SwiGLU's product: silu(gate) · up, with silu(x) = x · sigmoid(x); one fused kernel where the backend has
 * it (wasm with SIMD: forward and both gradients one SIMD pass each), else tfjs's ops. The fused kernel
 * rounds differently from the ops, so it runs for every shape: which one runs must not depend on how many
 * rows or padded positions share the call, or a prompt's logits would change with the batch it is
 * prefilled in (batching must not change an episode: tests/model/batch-invariance.test.ts).
 */
export function swiglu(gate: tf.Tensor, up: tf.Tensor): tf.Tensor {
  if (hasFusedKernel(SWIGLU_KERNEL)) return tf.engine().runKernel(SWIGLU_KERNEL, { gate, up }, {}) as tf.Tensor;
  return tf.mul(tf.mul(gate, tf.sigmoid(gate)), up);
}

/** Rotary tables as in HF Llama: cos/sin of pos · invFreq[i] (rope.ts), the D/2 frequencies repeated twice. [P, D] each. */
export function ropeTables(
  maxPositions: number,
  headDim: number,
  invFreq: Float64Array,
): { cos: tf.Tensor2D; sin: tf.Tensor2D; rotate: tf.Tensor2D } {
  const half = headDim / 2;
  if (invFreq.length !== half)
    throw new Error(`ropeTables: ${invFreq.length} inverse frequencies for head_dim ${headDim}; expected ${half}.`);
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
  if (hasFusedKernel(ROPE_KERNEL)) return tf.engine().runKernel(ROPE_KERNEL, { x, cos, sin }, {}) as tf.Tensor4D;
  const rotated = mm(x, rotate) as tf.Tensor4D; // [B, H, T, D]
  return tf.add(tf.mul(x, cos), tf.mul(rotated, sin)) as tf.Tensor4D;
}
