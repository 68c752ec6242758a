/**
 * Fused kernels on tfjs-wasm over the wasm heap, for the elementwise chains where tfjs's cost per op,
 * not the arithmetic, is the time: a decoding step of the micro model ran 650 ops for a few hundred
 * numbers each. In training the fused kernels also make fewer passes over the activations. Gradients
 * are fused.ts's. RMSNorm, RoPE, Adam and SwiGLU's forward pass run wasm-simd/'s SIMD kernels (a JS loop widens
 * every float to a double, 3–9 ns an element against tfjs's own ops' fraction of one; Math.exp costs 15–30),
 * SwiGLU's gradients too.
 * - RMSNorm: one op forward instead of six (square, mean, add, rsqrt, two multiplies), one for the
 *   weight gradient instead of three, one for the input gradient instead of about fifteen (the WebGPU
 *   kernels' formulas, webgpu/rms-norm.ts); the JS loop where a row is not whole vectors.
 * - Adam / AdamW: one pass writing p, m and v instead of about fifteen ops per variable.
 * - A global gradient norm's sum of squares: one pass per tensor, one op for all of them.
 * - RoPE: x·cos + rotate_half(x)·sin in one op instead of five (a rotation product, two multiplies,
 *   an add, a reshape); its gradient is the same kernel rotating back. SIMD where half a head is whole vectors.
 * - SwiGLU: silu(gate)·up in one op instead of three, and each of its gradients in one instead of about four.
 */
import * as tf from '@tensorflow/tfjs';
import {
  ADAM_STEP_KERNEL,
  SUM_SQUARES_KERNEL,
  RMS_NORM_DW_KERNEL,
  RMS_NORM_DX_KERNEL,
  RMS_NORM_FACTOR_KERNEL,
  RMS_NORM_KERNEL,
  ROPE_KERNEL,
  SWIGLU_KERNEL,
  type AdamHyper,
} from './fused.ts';
import {
  heapKernelsOf,
  simdKernelsSupported,
  type HeapKernels,
  type TfjsWasmBackend as WasmHeap,
} from './wasm-simd/heap-kernels.ts';

/** A kernel's loop over heap views of its inputs and output, `rows` × `cols` being its first input's shape. */
type Loop = (
  inputs: Record<string, Float32Array>,
  out: Float32Array,
  rows: number,
  cols: number,
  attrs: Record<string, unknown>,
  shapes: Record<string, number[]>,
) => void;

/** The same kernel on wasm-simd/'s SIMD kernels, given heap addresses; false when it does not take these sizes (the loop runs). */
type SimdKernel = (
  kernels: HeapKernels,
  at: Record<string, number>,
  out: number,
  rows: number,
  cols: number,
  attrs: Record<string, unknown>,
  shapes: Record<string, number[]>,
) => boolean;

/**
 * Registers a float32 kernel whose output has `shapeOf(inputs)`, looping over the first input's rows of
 * its last axis: with the SIMD kernel where there is one for these sizes, the JS loop otherwise. Views
 * are taken after the output is allocated: allocating can grow the heap and detach older views.
 */
function register(
  kernelName: string,
  shapeOf: (inputs: Record<string, tf.TensorInfo>) => number[],
  loop: Loop,
  simd?: SimdKernel,
): void {
  tf.registerKernel({
    kernelName,
    backendName: 'wasm',
    kernelFunc: ({ inputs, backend, attrs }) => {
      const heap = backend as unknown as WasmHeap;
      const named = inputs as Record<string, tf.TensorInfo>;
      const first = Object.values(named)[0];
      const cols = first.shape[first.shape.length - 1];
      const rows = tf.util.sizeFromShape(first.shape) / cols;
      const shapes = Object.fromEntries(Object.entries(named).map(([k, t]) => [k, t.shape]));
      const output = heap.makeOutput(shapeOf(named), 'float32');
      if (simd && simdKernelsSupported()) {
        const at = Object.fromEntries(Object.entries(named).map(([k, t]) => [k, heap.getMemoryOffset(t.dataId)]));
        if (
          simd(
            heapKernelsOf(heap.wasm),
            at,
            heap.getMemoryOffset(output.dataId),
            rows,
            cols,
            (attrs ?? {}) as Record<string, unknown>,
            shapes,
          )
        )
          return output;
      }
      const views = Object.fromEntries(Object.entries(named).map(([k, t]) => [k, heap.typedArrayFromHeap(t)]));
      loop(views, heap.typedArrayFromHeap(output), rows, cols, (attrs ?? {}) as Record<string, unknown>, shapes);
      return output;
    },
  });
}

/** The SIMD row kernels take rows of whole vectors (every width Spindle's models use). */
const simdRows = (cols: number) => cols % 4 === 0;

/** r = 1/sqrt(mean(x²) + eps) of one row. */
function rowFactor(x: Float32Array, base: number, cols: number, eps: number): number {
  let sq = 0;
  for (let c = 0; c < cols; c++) sq += x[base + c] * x[base + c];
  return 1 / Math.sqrt(sq / cols + eps);
}

export function registerWasmFusedKernels(): void {
  if (tf.getKernel(RMS_NORM_KERNEL, 'wasm')) return;
  registerRmsNorm();
  registerRope();
  if (simdKernelsSupported()) {
    // Without SIMD these run as tfjs's ops: SwiGLU's JS loops (an exp at 15–30 ns an element) would cost a training step more.
    registerSwiglu();
    registerAdam(); // otherwise adam-update.ts's tfjs ops run
    registerSumSquares(); // otherwise model/ops.ts's sumOfSquares runs a square and a sum per tensor
  }
}

/** RMSNorm, its factor alone, and its two gradients (dx and the weight's). */
function registerRmsNorm(): void {
  register(
    RMS_NORM_KERNEL,
    (i) => i.x.shape,
    ({ x, weight }, out, rows, cols, attrs) => {
      const eps = attrs.eps as number;
      for (let row = 0, base = 0; row < rows; row++, base += cols) {
        const r = rowFactor(x, base, cols, eps);
        for (let c = 0; c < cols; c++) out[base + c] = x[base + c] * r * weight[c];
      }
    },
    (k, at, out, rows, cols, attrs) => {
      if (!simdRows(cols)) return false;
      k.rmsNorm(at.x, at.weight, out, rows, cols, attrs.eps as number);
      return true;
    },
  );
  register(
    RMS_NORM_FACTOR_KERNEL,
    (i) => [...i.x.shape.slice(0, -1), 1],
    ({ x }, out, rows, cols, attrs) => {
      for (let row = 0; row < rows; row++) out[row] = rowFactor(x, row * cols, cols, attrs.eps as number);
    },
    (k, at, out, rows, cols, attrs) => {
      if (!simdRows(cols)) return false;
      k.rmsNormFactor(at.x, out, rows, cols, attrs.eps as number);
      return true;
    },
  );
  // dx = r·w·dy − r³·x·Σ(w·dy·x)/C
  register(
    RMS_NORM_DX_KERNEL,
    (i) => i.x.shape,
    ({ dy, x, weight }, out, rows, cols, attrs) => {
      const eps = attrs.eps as number;
      for (let row = 0, base = 0; row < rows; row++, base += cols) {
        const r = rowFactor(x, base, cols, eps);
        let dot = 0;
        for (let c = 0; c < cols; c++) dot += weight[c] * dy[base + c] * x[base + c];
        const k = (r * r * r * dot) / cols;
        for (let c = 0; c < cols; c++) out[base + c] = r * weight[c] * dy[base + c] - k * x[base + c];
      }
    },
    (k, at, out, rows, cols, attrs) => {
      if (!simdRows(cols)) return false;
      k.rmsNormDx(at.dy, at.x, at.weight, out, rows, cols, attrs.eps as number);
      return true;
    },
  );
  // dw = Σ_rows dy·(x·r), accumulated row after row into the zeroed output
  register(
    RMS_NORM_DW_KERNEL,
    (i) => [i.x.shape[i.x.shape.length - 1]],
    ({ dy, x }, out, rows, cols, attrs) => {
      out.fill(0);
      const eps = attrs.eps as number;
      for (let row = 0, base = 0; row < rows; row++, base += cols) {
        const r = rowFactor(x, base, cols, eps);
        for (let c = 0; c < cols; c++) out[c] += dy[base + c] * (x[base + c] * r);
      }
    },
    (k, at, out, rows, cols, attrs) => {
      if (!simdRows(cols)) return false;
      k.floats().fill(0, out / 4, out / 4 + cols);
      k.rmsNormDw(at.dy, at.x, out, rows, cols, attrs.eps as number);
      return true;
    },
  );
}

function registerRope(): void {
  // RoPE over x [B, H, T, D] with cos/sin [T, D] or [B, 1, T, D]; `inverse` rotates back (the gradient).
  register(
    ROPE_KERNEL,
    (i) => i.x.shape,
    ({ x, cos, sin }, out, rows, D, attrs, shapes) => {
      const [, H, T] = shapes.x;
      const perRow = shapes.cos.length === 4; // [B, 1, T, D]
      const sign = attrs.inverse ? -1 : 1;
      const half = D / 2;
      for (let row = 0; row < rows; row++) {
        const t = row % T;
        const b = Math.floor(row / (H * T));
        const table = (perRow ? b * T + t : t) * D;
        const base = row * D;
        for (let d = 0; d < half; d++) {
          out[base + d] = x[base + d] * cos[table + d] - sign * x[base + d + half] * sin[table + d];
          out[base + d + half] =
            x[base + d + half] * cos[table + d + half] + sign * x[base + d] * sin[table + d + half];
        }
      }
    },
    (k, at, out, rows, D, attrs, shapes) => {
      if ((D / 2) % 4 !== 0) return false;
      const [, H, T] = shapes.x;
      k.rope(at.x, at.cos, at.sin, out, { rows, D, T, H }, shapes.cos.length === 4, Boolean(attrs.inverse));
      return true;
    },
  );
}

function registerSwiglu(): void {
  // silu(gate)·up, and its two gradients (`part`: 'gate' | 'up', with dy). The JS loop where a row is not
  // whole vectors (a model's width decides, never a batch's rows: the two round differently).
  register(
    SWIGLU_KERNEL,
    (i) => i.gate.shape,
    ({ gate, up, dy }, out, rows, cols, attrs) => {
      const n = rows * cols;
      const part = attrs.part as string | undefined;
      for (let i = 0; i < n; i++) {
        const g = gate[i];
        const s = 1 / (1 + Math.exp(-g));
        if (!part) out[i] = g * s * up[i];
        else if (part === 'up') out[i] = dy[i] * g * s;
        else out[i] = dy[i] * up[i] * s * (1 + g * (1 - s));
      }
    },
    (k, at, out, rows, cols, attrs) => {
      if (!simdRows(cols)) return false;
      if (attrs.part)
        k.swigluGrad(attrs.part as 'gate' | 'up', { gate: at.gate, up: at.up, dy: at.dy, out }, rows * cols);
      else k.swiglu(at.gate, at.up, out, rows * cols);
      return true;
    },
  );
}

/** Adam / AdamW (fused.ts's ADAM_STEP_KERNEL, attrs as src/train/adam-update.ts passes them): p', m' and v' in one SIMD pass. */
function registerAdam(): void {
  tf.registerKernel({
    kernelName: ADAM_STEP_KERNEL,
    backendName: 'wasm',
    kernelFunc: ({ inputs, backend, attrs }) => {
      const heap = backend as unknown as WasmHeap;
      const { p, g, m, v } = inputs as Record<'p' | 'g' | 'm' | 'v', tf.TensorInfo>;
      const outputs = [p, m, v].map(() => heap.makeOutput(p.shape, 'float32'));
      const at = (t: tf.TensorInfo) => heap.getMemoryOffset(t.dataId);
      const [outP, outM, outV] = outputs.map(at);
      heapKernelsOf(heap.wasm).adam(
        { p: at(p), g: at(g), m: at(m), v: at(v), outP, outM, outV },
        tf.util.sizeFromShape(p.shape),
        attrs as unknown as AdamHyper,
      );
      return outputs;
    },
  });
}

/** SUM_SQUARES_KERNEL: each tensor's sum of squares in one SIMD pass (float32), added up in double here. */
function registerSumSquares(): void {
  tf.registerKernel({
    kernelName: SUM_SQUARES_KERNEL,
    backendName: 'wasm',
    kernelFunc: ({ inputs, backend }) => {
      const heap = backend as unknown as WasmHeap;
      const out = heap.makeOutput([], 'float32');
      const kernels = heapKernelsOf(heap.wasm);
      const at = heap.getMemoryOffset(out.dataId);
      let total = 0;
      for (const t of Object.values(inputs as Record<string, tf.TensorInfo>))
        total += kernels.sumSquares(heap.getMemoryOffset(t.dataId), tf.util.sizeFromShape(t.shape), at);
      kernels.floats()[at / 4] = total;
      return out;
    },
  });
}
