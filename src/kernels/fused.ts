/**
 * Fused operations some backends run as one kernel of Spindle's (src/kernels/webgpu on WebGPU,
 * wasm-fused.ts on wasm): their names, and their gradients, which are the same on every backend
 * because they call the backend's own gradient kernels by name. The ops in model/ops.ts run a fused kernel
 * when the current backend has it and their composite tfjs form otherwise.
 */
import * as tf from '@tensorflow/tfjs';

/** x [..., C], weight [C]; attrs eps → x·r·weight, r = 1/sqrt(mean(x²) + eps) per row of C. */
export const RMS_NORM_KERNEL = 'SpindleRMSNorm';
/** dy, x, weight → dx (RMSNorm's input gradient). */
export const RMS_NORM_DX_KERNEL = 'SpindleRMSNormDx';
/** x [..., C] → r [..., 1] (RMSNorm's per-row factors, for the weight gradient). */
export const RMS_NORM_FACTOR_KERNEL = 'SpindleRMSNormFactor';
/** dy, x [..., C] → Σ over every row of dy·x·r [C] (RMSNorm's weight gradient). */
export const RMS_NORM_DW_KERNEL = 'SpindleRMSNormDw';
/** logits [..., cols] → softmax over the last axis. */
export const SOFTMAX_KERNEL = 'SpindleSoftmax';
/** dy, y → y·(dy − Σ dy·y) per row (softmax's input gradient). */
export const SOFTMAX_DX_KERNEL = 'SpindleSoftmaxDx';
/** x [B, H, T, D], cos and sin [T, D] or [B, 1, T, D]; attrs inverse → x·cos ± rotate_half(x)·sin (− rotates back). */
export const ROPE_KERNEL = 'SpindleRope';
/** gate, up [..., I] → silu(gate)·up; with dy and attrs part 'gate' | 'up', that input's gradient. */
export const SWIGLU_KERNEL = 'SpindleSwiGLU';
/**
 * q [B, G, R, D], k, v [B, G, Tk, D], bias? [T, Tk] | [B, 1, 1, T, Tk]; attrs scale, positions (T) → softmax(q·kᵀ·scale + bias)·v.
 * Causal: the queries are the last T of the Tk positions, and the bias masks every key after a query's own
 * (the transformer's always does), so a kernel may skip those keys. No gradient.
 */
export const ATTENTION_KERNEL = 'SpindleAttention';
/**
 * scores [B, G, R, Tk] (R = repeats·T, row r at position r mod T), bias [T, Tk] | [B, 1, 1, T, Tk]; attrs
 * scale → softmax(scores·scale + bias) over Tk: attention's probabilities where they need a gradient
 * (training). One pass instead of a scale, a mask add and a softmax, each a pass over every score.
 */
export const MASKED_SOFTMAX_KERNEL = 'SpindleMaskedSoftmax';
/** dy, y (MASKED_SOFTMAX_KERNEL's output); attrs scale → y·(dy − Σ dy·y)·scale per row: its scores' gradient. */
export const MASKED_SOFTMAX_DX_KERNEL = 'SpindleMaskedSoftmaxDx';
/**
 * q [B, G, R, D], k, v [B, G, T, D], bias [T, T] | [B, 1, 1, T, T]; attrs scale, positions (T) →
 * [softmax(q·kᵀ·scale + bias)·v, its probabilities (a kernel's own layout)]: training's attention over a
 * whole sequence, causal like ATTENTION_KERNEL. Its gradient is CAUSAL_ATTENTION_DX_KERNEL, through
 * model/ops.ts's causalAttention (a custom gradient: one kernel gives all three).
 */
export const CAUSAL_ATTENTION_KERNEL = 'SpindleCausalAttention';
/** dy, q, k, v, bias, probabilities (CAUSAL_ATTENTION_KERNEL's second output); the same attrs → [dq, dk, dv]. */
export const CAUSAL_ATTENTION_DX_KERNEL = 'SpindleCausalAttentionDx';
/** One decoding step of the whole model (decode-step.ts has its inputs and attrs). No gradient. */
export const DECODE_STEP_KERNEL = 'SpindleDecodeStep';
/**
 * logits [B, T, V], targets [B, T−1] (int32), active [B, T−1] (1: compute; 0: reads 0, no gradient);
 * attrs temperature → [3, B, T−1]: log p(target), entropy and log-normaliser of softmax(logits/τ).
 */
export const TOKEN_STATS_KERNEL = 'SpindleTokenStats';
/** dy [3, B, T−1], logits, targets, active, stats (TOKEN_STATS_KERNEL's output); attrs temperature → d logits [B, T, V]. */
export const TOKEN_STATS_DX_KERNEL = 'SpindleTokenStatsDx';
/** p, g, m, v; attrs AdamHyper and `part` → the new m, v or p (src/train/adam-update.ts). */
export const ADAM_KERNEL = 'SpindleAdam';
/** p, g, m, v; attrs AdamHyper → [p', m', v'], all three from one pass (wasm; a WebGPU kernel has one output, so it runs ADAM_KERNEL). */
export const ADAM_STEP_KERNEL = 'SpindleAdamStep';
/** Any number of float32 tensors → the scalar Σ of every element squared (a global gradient norm's square). No gradient. */
export const SUM_SQUARES_KERNEL = 'SpindleSumSquares';

/** ADAM_KERNEL's hyper-parameters, one update's (src/train/adam-update.ts passes them). */
export interface AdamHyper {
  kind: 'adam' | 'adamw';
  lr: number;
  b1: number;
  b2: number;
  eps: number;
  /** 1 − β1^t and 1 − β2^t. */
  bc1: number;
  bc2: number;
  /** Weight decay: decoupled for AdamW, L2 (added to the gradient) for Adam. */
  wd: number;
  /** The clipping factor the gradient is multiplied by (1 when not clipped). */
  gradScale: number;
}
/** a [..., K] · w (packed half pairs [K, N/2]), or a [..., N] · wᵀ with transposeW; attrs format, transposeW. */
export const HALF_MATMUL_KERNEL = 'SpindleHalfMatMul';
/** w (packed half pairs [K, N/2]); attrs format → the float32 [K, N] it holds. */
export const HALF_WIDEN_KERNEL = 'SpindleHalfWiden';
/** q (int32 [in, ⌈out/4⌉], four int8 per word), scales [out]; attrs outDim, transpose → float32 [in, out], or [out, in] with transpose. */
export const INT8_WIDEN_KERNEL = 'SpindleInt8Widen';

/** True when the current backend has the fused kernel `name`. */
export function hasFusedKernel(name: string): boolean {
  return tf.getKernel(name, tf.getBackend()) !== undefined;
}

const run = (name: string, inputs: tf.NamedTensorMap, attrs: tf.NamedAttrMap = {}) =>
  tf.engine().runKernel(name, inputs, attrs) as tf.Tensor;

tf.registerGradient({
  kernelName: RMS_NORM_KERNEL,
  inputsToSave: ['x', 'weight'],
  gradFunc: (dy, [x, weight], attrs) => {
    const g = dy as tf.Tensor;
    return {
      x: () => run(RMS_NORM_DX_KERNEL, { dy: g, x, weight }, attrs),
      // dw = Σ_rows dy·x·r: one kernel where the backend has it
      weight: () =>
        hasFusedKernel(RMS_NORM_DW_KERNEL)
          ? run(RMS_NORM_DW_KERNEL, { dy: g, x }, attrs)
          : tf.sum(tf.mul(g, tf.mul(x, run(RMS_NORM_FACTOR_KERNEL, { x }, attrs))), [...Array(x.rank - 1).keys()]),
    };
  },
});

tf.registerGradient({
  kernelName: SOFTMAX_KERNEL,
  outputsToSave: [true],
  gradFunc: (dy, [y]) => ({ logits: () => run(SOFTMAX_DX_KERNEL, { dy: dy as tf.Tensor, y }) }),
});

tf.registerGradient({
  kernelName: MASKED_SOFTMAX_KERNEL,
  inputsToSave: ['bias'],
  outputsToSave: [true],
  gradFunc: (dy, [bias, y], attrs) => ({
    scores: () => run(MASKED_SOFTMAX_DX_KERNEL, { dy: dy as tf.Tensor, y }, attrs),
    bias: () => tf.zerosLike(bias), // a mask is a constant: nothing trains through it
  }),
});

tf.registerGradient({
  kernelName: HALF_MATMUL_KERNEL,
  inputsToSave: ['w'],
  gradFunc: (dy, [w], attrs) => ({
    a: () => run(HALF_MATMUL_KERNEL, { a: dy as tf.Tensor, w }, { ...attrs, transposeW: !attrs.transposeW }),
    w: () => {
      throw new Error('half matmul: a half-precision weight is frozen; train it as f32 (or with LoRA)');
    },
  }),
});

tf.registerGradient({
  kernelName: TOKEN_STATS_KERNEL,
  inputsToSave: ['logits', 'targets', 'active'],
  outputsToSave: [true],
  gradFunc: (dy, [logits, targets, active, stats], attrs) => ({
    logits: () => run(TOKEN_STATS_DX_KERNEL, { dy: dy as tf.Tensor, logits, targets, active, stats }, attrs),
    targets: () => tf.zerosLike(targets),
    active: () => tf.zerosLike(active),
  }),
});

// RoPE is a rotation of each (d, d + D/2) pair by the position's angle (cos and sin repeat over the two
// halves, model/ops.ts's ropeTables), so its gradient is the rotation back: the same kernel with `inverse`.
tf.registerGradient({
  kernelName: ROPE_KERNEL,
  inputsToSave: ['cos', 'sin'],
  gradFunc: (dy, [cos, sin], attrs) => ({
    x: () => run(ROPE_KERNEL, { x: dy as tf.Tensor, cos, sin }, { inverse: !attrs.inverse }),
    cos: () => tf.zerosLike(cos),
    sin: () => tf.zerosLike(sin),
  }),
});

tf.registerGradient({
  kernelName: SWIGLU_KERNEL,
  inputsToSave: ['gate', 'up'],
  gradFunc: (dy, [gate, up]) => ({
    gate: () => run(SWIGLU_KERNEL, { gate, up, dy: dy as tf.Tensor }, { part: 'gate' }),
    up: () => run(SWIGLU_KERNEL, { gate, up, dy: dy as tf.Tensor }, { part: 'up' }),
  }),
});
