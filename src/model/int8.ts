/**
 * The frozen base in 8 bits (the run config's `model.quantization: int8`): each projection weight
 * [in, out] held as int8 values with one float32 scale per output channel (absmax / 127, round to
 * nearest), the layout LLM.int8()'s vector-wise quantization and PyTorch's per-channel qint8 use. LoRA
 * adapters, norms, biases and the embedding stay float32.
 *
 * Storage: tfjs has no int8 dtype, so four int8 values share an int32 word along the output axis
 * ([in, ⌈out/4⌉] int32). A projection is widened to float32 when it is used — SpindleInt8Widen, a JS
 * loop over the heap on wasm and over the buffers on cpu, a WGSL program on WebGPU (kernels/webgpu/int8-widen.ts)
 * — and the float copy is freed right after its
 * product, so at most one projection is float32 at a time (twice in the backward pass: the transposed
 * widening for the input gradient). The product's gradient widens again instead of keeping the float
 * copy on the tape, so an int8 base stays int8 through the backward pass. On WebGPU a bf16/f16 checkpoint
 * can also keep its projections in 16 bits (kernels/half.ts), at twice int8's memory and no widening pass.
 *
 * Memory, not speed: the widening costs a pass over the weights per product (a few ns an element); a
 * SIMD kernel that dequantizes inside the gemm would avoid the float copy and the pass.
 */
import * as tf from '@tensorflow/tfjs';
import type { TfjsWasmBackend } from '../kernels/wasm-simd/heap-kernels.ts';
import { INT8_WIDEN_KERNEL } from '../kernels/fused.ts';
import { mm } from './ops.ts';

/** A frozen projection [in, out] in int8 with per-output-channel scales. */
export interface Int8Weight {
  packed: tf.Tensor2D;
  scales: tf.Tensor1D;
  shape: [number, number];
}

/** Host-side quantization of a row-major [in, out] weight: int8 codes (packed four to an int32) and a scale per output column. */
export function quantizeInt8Host(
  values: Float32Array,
  inDim: number,
  outDim: number,
): { words: Int32Array; scales: Float32Array } {
  if (values.length !== inDim * outDim)
    throw new Error(`quantizeInt8: ${values.length} values for [${inDim}, ${outDim}]`);
  const scales = new Float32Array(outDim);
  for (let i = 0; i < inDim; i++) {
    for (let o = 0; o < outDim; o++) scales[o] = Math.max(scales[o], Math.abs(values[i * outDim + o]));
  }
  for (let o = 0; o < outDim; o++) scales[o] /= 127;
  const stride = wordsPerRow(outDim) * 4;
  const words = new Int32Array(inDim * wordsPerRow(outDim));
  const codes = new Int8Array(words.buffer);
  for (let i = 0; i < inDim; i++) {
    for (let o = 0; o < outDim; o++) {
      const s = scales[o];
      codes[i * stride + o] = s > 0 ? Math.max(-127, Math.min(127, Math.round(values[i * outDim + o] / s))) : 0;
    }
  }
  return { words, scales };
}

/** The float32 [in, out] values an int8 weight stands for (row-major), on the host. */
export function dequantizeInt8Host(
  words: Int32Array,
  scales: Float32Array,
  inDim: number,
  outDim: number,
  transpose = false,
): Float32Array {
  const out = new Float32Array(inDim * outDim);
  const codes = new Int8Array(words.buffer, words.byteOffset, words.length * 4);
  const stride = wordsPerRow(outDim) * 4;
  for (let i = 0; i < inDim; i++) {
    for (let o = 0; o < outDim; o++) {
      const v = codes[i * stride + o] * scales[o];
      if (transpose) out[o * inDim + i] = v;
      else out[i * outDim + o] = v;
    }
  }
  return out;
}

function wordsPerRow(outDim: number): number {
  return Math.ceil(outDim / 4);
}

/** An int8 weight on the current backend from a row-major float32 [in, out] array. */
export function int8Weight(values: Float32Array, inDim: number, outDim: number): Int8Weight {
  const { words, scales } = quantizeInt8Host(values, inDim, outDim);
  return {
    packed: tf.tensor2d(words, [inDim, wordsPerRow(outDim)], 'int32'),
    scales: tf.tensor1d(scales),
    shape: [inDim, outDim],
  };
}

/** Its float32 values, row-major [in, out] (getWeights, exports). */
export async function int8Values(w: Int8Weight): Promise<Float32Array> {
  return dequantizeInt8Host(
    (await w.packed.data()) as Int32Array,
    (await w.scales.data()) as Float32Array,
    w.shape[0],
    w.shape[1],
  );
}

function widen(w: Int8Weight, transpose: boolean): tf.Tensor2D {
  return tf
    .engine()
    .runKernel(INT8_WIDEN_KERNEL, { q: w.packed, scales: w.scales }, { outDim: w.shape[1], transpose }) as tf.Tensor2D;
}

/**
 * x [..., in] · W for an int8 W [in, out] → [..., out]. The float widening lives only for its product, in
 * the forward pass and again (transposed) for the input gradient; W is frozen, so it gets no gradient.
 */
export function int8MatMul(x: tf.Tensor, w: Int8Weight): tf.Tensor {
  if (x.shape[x.rank - 1] !== w.shape[0])
    throw new Error(`int8MatMul: [${x.shape}] · [${w.shape}]: inner sizes differ`);
  const op = tf.customGrad(((input: tf.Tensor) => ({
    value: mm(input, widen(w, false)), // [..., out]; customGrad's forward runs in a tidy, which frees the widening
    gradFunc: (dy: tf.Tensor) => tf.tidy(() => mm(dy, widen(w, true))), // [..., in]
  })) as unknown as Parameters<typeof tf.customGrad>[0]);
  return op(x);
}

/** The widening loop: codes (int8 view of the words), scales → out, row-major [in, out] or [out, in]. */
function widenLoop(
  codes: Int8Array,
  scales: Float32Array,
  out: Float32Array,
  inDim: number,
  outDim: number,
  transpose: boolean,
): void {
  const stride = wordsPerRow(outDim) * 4;
  for (let i = 0; i < inDim; i++) {
    const row = i * stride;
    if (transpose) {
      for (let o = 0; o < outDim; o++) out[o * inDim + i] = codes[row + o] * scales[o];
    } else {
      const base = i * outDim;
      for (let o = 0; o < outDim; o++) out[base + o] = codes[row + o] * scales[o];
    }
  }
}

function outputShape(q: tf.TensorInfo, attrs: tf.NamedAttrMap | undefined): [number, number, boolean] {
  return [q.shape[0], attrs?.outDim as number, Boolean(attrs?.transpose)];
}

/** Registers SpindleInt8Widen on wasm and cpu (a second call does nothing); WebGPU's is kernels/webgpu/int8-widen.ts. */
function registerInt8Kernels(): void {
  if (tf.getKernel(INT8_WIDEN_KERNEL, 'wasm')) return;
  tf.registerKernel({
    kernelName: INT8_WIDEN_KERNEL,
    backendName: 'wasm',
    kernelFunc: ({ inputs, backend, attrs }) => {
      const heap = backend as unknown as TfjsWasmBackend;
      const { q, scales } = inputs as { q: tf.TensorInfo; scales: tf.TensorInfo };
      const [inDim, outDim, transpose] = outputShape(q, attrs);
      const output = heap.makeOutput(transpose ? [outDim, inDim] : [inDim, outDim], 'float32');
      // Views after the output's allocation, which can grow the heap and detach older ones.
      const words = heap.typedArrayFromHeap(q) as unknown as Int32Array;
      widenLoop(
        new Int8Array(words.buffer, words.byteOffset, words.length * 4),
        heap.typedArrayFromHeap(scales),
        heap.typedArrayFromHeap(output),
        inDim,
        outDim,
        transpose,
      );
      return output;
    },
  });
  tf.registerKernel({
    kernelName: INT8_WIDEN_KERNEL,
    backendName: 'cpu',
    kernelFunc: ({ inputs, backend, attrs }) => {
      const cpu = backend as unknown as {
        data: { get(id: object): { values: unknown } };
        makeTensorInfo(shape: number[], dtype: 'float32', values: Float32Array): tf.TensorInfo;
      };
      const { q, scales } = inputs as { q: tf.TensorInfo; scales: tf.TensorInfo };
      const [inDim, outDim, transpose] = outputShape(q, attrs);
      const words = cpu.data.get(q.dataId).values as Int32Array;
      const out = new Float32Array(inDim * outDim);
      widenLoop(
        new Int8Array(words.buffer, words.byteOffset, words.length * 4),
        cpu.data.get(scales.dataId).values as Float32Array,
        out,
        inDim,
        outDim,
        transpose,
      );
      return cpu.makeTensorInfo(transpose ? [outDim, inDim] : [inDim, outDim], 'float32', out);
    },
  });
}

registerInt8Kernels();
