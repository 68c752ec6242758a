/**
 * The few tensor operations the transformer is built from, written around two tfjs pitfalls
 * (notes/stack-facts.md §2):
 * - tfjs-wasm's BatchMatMul takes a slow path for transposed operands, and tfjs's own matMul
 *   gradient always uses them; `mm` has its own gradient that transposes explicitly (≈3× faster
 *   training step on wasm). It also takes the slow path for any batched product: `bmm` runs
 *   attention's products as a depthwise convolution there.
 * - the gradient of `tf.gather` needs `UnsortedSegmentSum`, which wasm lacks; `embed` looks rows up
 *   with a one-hot matmul when the table needs a gradient.
 */
import * as tf from '@tensorflow/tfjs';
import { ATTENTION_KERNEL, HALF_MATMUL_KERNEL, hasFusedKernel, RMS_NORM_KERNEL, ROPE_KERNEL, SOFTMAX_KERNEL, SWIGLU_KERNEL } from './fused.ts';

/** Swaps the last two axes: [..., m, n] → [..., n, m]. */
export function swapLast(x: tf.Tensor): tf.Tensor {
  const perm = [...Array(x.rank).keys()];
  [perm[x.rank - 2], perm[x.rank - 1]] = [perm[x.rank - 1], perm[x.rank - 2]];
  return tf.transpose(x, perm);
}

/**
 * `mm`'s kernel: the backend's own BatchMatMul without transposes, under a name of ours so that its
 * gradient is ours too. Registered kernels get lazy per-input gradients (a customGrad computes every
 * input's eagerly), so a frozen weight's gradient, a third of a LoRA backward pass's products, is
 * never computed; and the gradient transposes explicitly, which keeps tfjs-wasm on XNNPACK.
 * It takes a [..., k] and b [k, n] as they are and views them as [1, rows, k] and [1, k, n] inside
 * the kernel: the expandDims, squeeze and reshapes around every product were a third of a decoding
 * step's 650 ops, each paying tfjs's per-op cost.
 */
const MATMUL_KERNEL = 'SpindleMatMul';

tf.registerGradient({
  kernelName: MATMUL_KERNEL,
  inputsToSave: ['a', 'b'],
  gradFunc: (dy, saved) => {
    const [a, b] = saved;
    const g = dy as tf.Tensor; // [..., n]
    const [k, n] = b.shape;
    return { a: () => mm(g, b.transpose()), b: () => mm(a.reshape([-1, k]).transpose(), g.reshape([-1, n])) }; // [..., k], [k, n]
  },
});

function ensureMatMulKernel(backendName: 'wasm'): void {
  if (tf.getKernel(MATMUL_KERNEL, backendName)) return;
  const batchMatMul = tf.getKernel('BatchMatMul', backendName);
  if (!batchMatMul) throw new Error(`The ${backendName} backend has no BatchMatMul kernel.`);
  tf.registerKernel({
    kernelName: MATMUL_KERNEL,
    backendName,
    kernelFunc: ({ inputs, backend }) => {
      const { a, b } = inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
      const [k, n] = b.shape;
      const rows = tf.util.sizeFromShape(a.shape) / k;
      // Shape views of the same buffers (what Reshape returns on wasm), read by BatchMatMul as 3-D.
      const out = batchMatMul.kernelFunc({
        inputs: { a: { ...a, shape: [1, rows, k] }, b: { ...b, shape: [1, k, n] } },
        backend,
        attrs: { transposeA: false, transposeB: false },
      }) as tf.TensorInfo;
      return { ...out, shape: [...a.shape.slice(0, -1), n] };
    },
  });
}

/**
 * a [..., k] · b [k, n] → [..., n]. On wasm through the kernel above; other backends run transposed
 * products natively, so tfjs's own matMul and its (lazy) gradient are used.
 */
export function mm(a: tf.Tensor, b: tf.Tensor): tf.Tensor {
  const [k, n] = b.shape as [number, number];
  if (b.rank !== 2 || a.shape[a.rank - 1] !== k) throw new Error(`mm multiplies [..., k] by [k, n]; got shapes [${a.shape}] and [${b.shape}] (bmm takes batches).`);
  const backend = tf.getBackend();
  if (backend !== 'wasm') {
    if (a.rank === 2) return tf.matMul(a, b);
    return tf.matMul(a.reshape([-1, k]), b).reshape([...a.shape.slice(0, -1), n]);
  }
  ensureMatMulKernel(backend);
  return tf.engine().runKernel(MATMUL_KERNEL, { a, b }, {}) as tf.Tensor;
}

/** x [..., k] · W for a half-precision weight W [k, n] (transformer.ts's HalfWeight) on a backend with the kernel. */
export function halfMatMul(x: tf.Tensor, w: { packed: tf.Tensor2D; format: string; shape: [number, number] }): tf.Tensor {
  const [k, n] = w.shape;
  if (x.shape[x.rank - 1] !== k) throw new Error(`halfMatMul: [${x.shape}] · [${k}, ${n}]: inner sizes differ`);
  return tf.engine().runKernel(HALF_MATMUL_KERNEL, { a: x, w: w.packed }, { format: w.format, transposeW: false }) as tf.Tensor;
}

/** Per-slice work (m·k·n multiply-adds) below which `bmm` keeps the plain batched product (generation's one-query attention). */
const DEPTHWISE_MIN_WORK = 1 << 15;

/**
 * a [N, m, k] · b [N, k, n] → [N, m, n], or a · bᵀ for b [N, n, k] with `transposeB` (attention's
 * q·kᵀ, without copying the key cache into a transposed tensor every decoding step).
 *
 * tfjs-wasm sends every batched BatchMatMul to a naive loop (≈2 GFLOP/s) and splitting the batch into
 * 2D products costs more in slicing than it saves; but its depthwise convolution is XNNPACK's grouped
 * GEMM. With the N slices as channels, a filter 1 × k wide over an input k wide is exactly one
 * [m, k] · [k, n] product per channel: attention's 32 slices of [128, 32] · [32, 64] run 4.7× faster,
 * bit for bit the same.
 */
function batchedProduct(a: tf.Tensor3D, b: tf.Tensor3D, transposeB: boolean): tf.Tensor3D {
  const [N, m, k] = a.shape;
  const n = transposeB ? b.shape[1] : b.shape[2];
  if (N === 1 || tf.getBackend() !== 'wasm' || m * k * n < DEPTHWISE_MIN_WORK) return tf.matMul(a, b, false, transposeB);
  const input = a.transpose([1, 2, 0]).reshape([1, m, k, N]) as tf.Tensor4D; // NHWC: [1, m, k, N]
  const filter = b.transpose(transposeB ? [2, 0, 1] : [1, 0, 2]).reshape([1, k, N, n]) as tf.Tensor4D; // [1, k, N, n]
  const out = tf.depthwiseConv2d(input, filter, 1, 'valid'); // [1, m, 1, N·n]
  return out.reshape([m, N, n]).transpose([1, 0, 2]) as tf.Tensor3D;
}

function batchedMatMul(transposeB: boolean) {
  return tf.customGrad((...inputs: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const [a, b, save] = inputs as [tf.Tensor3D, tf.Tensor3D, tf.GradSaveFunc];
    save([a, b]);
    return {
      value: batchedProduct(a, b, transposeB),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [sa, sb] = saved as tf.Tensor3D[];
        const g = dy as tf.Tensor3D; // [N, m, n]
        const da = batchedProduct(g, sb, !transposeB); // [N, m, k]
        // d(a·b)/db = aᵀ·g [N, k, n]; d(a·bᵀ)/db = gᵀ·a [N, n, k]
        const db = transposeB ? batchedProduct(swapLast(g) as tf.Tensor3D, sa, false) : batchedProduct(swapLast(sa) as tf.Tensor3D, g, false);
        return [da, db];
      },
    };
  });
}
const batchedMatMuls = { plain: batchedMatMul(false), transposed: batchedMatMul(true) };

/**
 * a [..., m, k] · b [..., k, n] → [..., m, n] over equal batch dims (attention's products), fast on
 * wasm too; with `transposeB`, b is [..., n, k] and the product is a · bᵀ. `differentiable: false`
 * (generation) skips the custom gradient's bookkeeping, a cost per call comparable to the product's.
 */
export function bmm(a: tf.Tensor, b: tf.Tensor, transposeB = false, differentiable = true): tf.Tensor {
  // Generation's one-query products: tfjs's batched matMul takes any rank, with no reshapes around it.
  if (!differentiable && a.shape[a.rank - 2] * a.shape[a.rank - 1] * b.shape[transposeB ? b.rank - 2 : b.rank - 1] < DEPTHWISE_MIN_WORK) {
    return tf.matMul(a, b, false, transposeB);
  }
  const lead = a.shape.slice(0, -2);
  const [m, k] = a.shape.slice(-2);
  const n = b.shape[transposeB ? b.rank - 2 : b.rank - 1];
  const N = lead.reduce((x, y) => x * y, 1);
  const product = differentiable ? (transposeB ? batchedMatMuls.transposed : batchedMatMuls.plain) : (x: tf.Tensor3D, y: tf.Tensor3D) => batchedProduct(x, y, transposeB);
  const out = product(a.reshape([N, m, k]) as tf.Tensor3D, b.reshape(transposeB ? [N, n, k] : [N, k, n]) as tf.Tensor3D);
  return out.reshape([...lead, m, n]);
}

/** Row lookup: ids [N] in table [V, C] → [N, C]. One-hot matmul when the table trains, gather otherwise. */
export function embed(table: tf.Tensor2D, ids: tf.Tensor1D, differentiable: boolean): tf.Tensor2D {
  if (!differentiable) return tf.gather(table, ids) as tf.Tensor2D; // [N, C]
  const oneHot = tf.oneHot(ids, table.shape[0]).toFloat(); // [N, V]
  return mm(oneHot, table) as tf.Tensor2D; // [N, C]
}

/** RMSNorm: x / sqrt(mean(x²) + eps) · weight, over the last axis. */
export function rmsNorm(x: tf.Tensor, weight: tf.Tensor1D, eps: number): tf.Tensor {
  if (hasFusedKernel(RMS_NORM_KERNEL)) return tf.engine().runKernel(RMS_NORM_KERNEL, { x, weight }, { eps }) as tf.Tensor;
  const meanSquare = tf.mean(tf.square(x), -1, true); // [..., 1]
  return tf.mul(tf.mul(x, tf.rsqrt(tf.add(meanSquare, eps))), weight); // [..., C]
}

/** Keys up to which the fused attention kernel holds a row's scores (webgpu/attention.ts's MAX_KEYS). */
const FUSED_ATTENTION_MAX_KEYS = 2048;

/**
 * softmax(q·kᵀ·scale + bias)·v in one kernel, for generation on a backend that has it (WebGPU) and at
 * most FUSED_ATTENTION_MAX_KEYS keys; null otherwise, and the caller runs the products and softmax.
 * q [B, G, R, D] with row r of a group at position r mod `positions`; k, v [B, G, Tk, D].
 */
export function fusedAttention(q: tf.Tensor, k: tf.Tensor, v: tf.Tensor, bias: tf.Tensor | null, scale: number, positions: number): tf.Tensor | null {
  if (k.shape[2]! > FUSED_ATTENTION_MAX_KEYS || !hasFusedKernel(ATTENTION_KERNEL)) return null;
  const inputs: tf.NamedTensorMap = bias ? { q, k, v, bias } : { q, k, v };
  return tf.engine().runKernel(ATTENTION_KERNEL, inputs, { scale, positions }) as tf.Tensor;
}

/** Softmax over the last axis (attention's probabilities), with a fused gradient where the backend has one. */
export function softmax(x: tf.Tensor): tf.Tensor {
  return hasFusedKernel(SOFTMAX_KERNEL) ? (tf.engine().runKernel(SOFTMAX_KERNEL, { logits: x }, {}) as tf.Tensor) : tf.softmax(x);
}

/**
 * Elements up to which SwiGLU runs as one fused kernel. The wasm one is a JS loop whose exp costs about
 * 15 ns an element against tfjs's own ops' 3 or so: it pays where the two ops it saves (≈ 4 µs each)
 * are the cost, a decoding step's few thousand elements, and not on a training batch's hundreds of
 * thousands (a micro-model train step spent 112 ms in it).
 */
const FUSED_SWIGLU_MAX = 16_384;

/** SwiGLU's product: silu(gate) · up, with silu(x) = x · sigmoid(x). */
export function swiglu(gate: tf.Tensor, up: tf.Tensor): tf.Tensor {
  if (gate.size <= FUSED_SWIGLU_MAX && hasFusedKernel(SWIGLU_KERNEL)) return tf.engine().runKernel(SWIGLU_KERNEL, { gate, up }, {}) as tf.Tensor;
  return tf.mul(tf.mul(gate, tf.sigmoid(gate)), up);
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
  if (hasFusedKernel(ROPE_KERNEL)) return tf.engine().runKernel(ROPE_KERNEL, { x, cos, sin }, {}) as tf.Tensor4D;
  const rotated = mm(x, rotate) as tf.Tensor4D; // [B, H, T, D]
  return tf.add(tf.mul(x, cos), tf.mul(rotated, sin)) as tf.Tensor4D;
}
