/**
 * Spindle's matrix products on tfjs-wasm: two kernels of ours, so that their gradients are ours too.
 *
 *   SpindleMatMul       a [..., k] · b [k, n] → [..., n]
 *                       transposeB: a [..., k] · bᵀ for b [n, k] → [..., n]          (the input gradient g·Wᵀ)
 *                       transposeA: aᵀ · b for a [..., m], b [..., n], summed over the
 *                                   leading axes → [m, n]                           (the weight gradient xᵀ·g)
 *   SpindleBatchMatMul  a [..., m, k] · b [..., k, n] → [..., m, n] over equal leading axes, either
 *                       operand stored transposed ([..., k, m], [..., n, k]) by the same flags
 *                                                                                   (attention's products)
 *
 * Why our own: registered kernels get lazy per-input gradients (a frozen weight's gradient, a third of
 * a LoRA backward pass's products, is never computed), and the products run on wasm-simd/, a SIMD
 * kernel over tfjs's heap that reads transposed operands by their strides: tfjs-wasm's BatchMatMul
 * sends transposed or batched operands to a naive loop, so before this every gradient product paid
 * for an explicit transpose, and attention ran as a depthwise convolution.
 * XNNPACK keeps one case (prefersXnnpack): every 2-D product when tfjs-wasm runs XNNPACK on more threads
 * than ours run on (a cross-origin-isolated page's main thread, which may not block, on a machine with
 * four or more cores), with explicit transposes, since fewer threads of ours do not beat more of its.
 * Few-row products stay ours too: XNNPACK sums in another order, so a batch of fewer than 8 prompts (the
 * prefill's last-position logits) would round differently from a larger one, and batching would change
 * which tokens an episode samples (tests/model/batch-invariance.test.ts). Decoding steps, where XNNPACK's
 * kept packing paid, run in one kernel of their own (SpindleDecodeStep).
 */
import * as tf from '@tensorflow/tfjs';
import { heapKernelsOf, type TfjsWasmBackend as WasmBackend } from './wasm-simd/heap-kernels.ts';

export const MATMUL_KERNEL = 'SpindleMatMul';
export const BATCH_MATMUL_KERNEL = 'SpindleBatchMatMul';

interface ProductAttrs {
  transposeA?: boolean;
  transposeB?: boolean;
}

const run = (name: string, a: tf.Tensor, b: tf.Tensor, attrs: ProductAttrs = {}) =>
  tf.engine().runKernel(name, { a, b }, attrs as tf.NamedAttrMap) as tf.Tensor;

/**
 * The gradients of y = A'·B' for either kernel, by the flags (dy = g):
 *   y = a·b   → da = g·bᵀ, db = aᵀ·g
 *   y = a·bᵀ  → da = g·b,  db = gᵀ·a
 *   y = aᵀ·b  → da = b·gᵀ, db = a·g
 */
function productGradient(kernelName: string): tf.GradConfig {
  return {
    kernelName,
    inputsToSave: ['a', 'b'],
    gradFunc: (dy, [a, b], attrs) => {
      const g = dy as tf.Tensor;
      const { transposeA, transposeB } = attrs as ProductAttrs;
      if (transposeA) return { a: () => run(kernelName, b, g, { transposeB: true }), b: () => run(kernelName, a, g) };
      if (transposeB) return { a: () => run(kernelName, g, b), b: () => run(kernelName, g, a, { transposeA: true }) };
      return {
        a: () => run(kernelName, g, b, { transposeB: true }),
        b: () => run(kernelName, a, g, { transposeA: true }),
      };
    },
  };
}
tf.registerGradient(productGradient(MATMUL_KERNEL));
tf.registerGradient(productGradient(BATCH_MATMUL_KERNEL));

/** Sizes of one product: C[m, n] = A'[m, k] · B'[k, n], with `shape` the output's. */
interface ProductShape {
  m: number;
  k: number;
  n: number;
  shape: number[];
}

function matMulShape(a: tf.TensorInfo, b: tf.TensorInfo, { transposeA, transposeB }: ProductAttrs): ProductShape {
  const size = tf.util.sizeFromShape;
  const last = (t: tf.TensorInfo) => t.shape[t.shape.length - 1];
  if (transposeA) {
    const [m, n] = [last(a), last(b)];
    const k = size(a.shape) / m;
    if (transposeB || size(b.shape) / n !== k)
      throw new Error(
        `SpindleMatMul: aᵀ·b needs a [..., m] and b [..., n] over the same rows; got [${a.shape}] and [${b.shape}]`,
      );
    return { m, k, n, shape: [m, n] };
  }
  const k = last(a);
  const [bk, n] = transposeB ? [b.shape[1], b.shape[0]] : [b.shape[0], b.shape[1]];
  if (b.shape.length !== 2 || bk !== k)
    throw new Error(`SpindleMatMul: [${a.shape}] · ${transposeB ? 'ᵀ' : ''}[${b.shape}]: inner sizes differ`);
  return { m: size(a.shape) / k, k, n, shape: [...a.shape.slice(0, -1), n] };
}

function batchMatMulShape(
  a: tf.TensorInfo,
  b: tf.TensorInfo,
  { transposeA, transposeB }: ProductAttrs,
): ProductShape & { batch: number } {
  const lead = a.shape.slice(0, -2);
  const [ar, ac] = a.shape.slice(-2);
  const [br, bc] = b.shape.slice(-2);
  const [m, k] = transposeA ? [ac, ar] : [ar, ac];
  const [bk, n] = transposeB ? [bc, br] : [br, bc];
  const sameLead = b.shape.length === a.shape.length && lead.every((d, i) => d === b.shape[i]);
  if (a.shape.length < 3 || !sameLead || k !== bk) {
    throw new Error(
      `SpindleBatchMatMul: [${a.shape}]${transposeA ? 'ᵀ' : ''} · [${b.shape}]${transposeB ? 'ᵀ' : ''}: leading or inner sizes differ`,
    );
  }
  return { batch: tf.util.sizeFromShape(lead), m, k, n, shape: [...lead, m, n] };
}

/** Runs `count` products of the given sizes on the heap gemm (split between threads where there are several); zeros when k is 0. */
function heapProducts(
  backend: WasmBackend,
  a: tf.TensorInfo,
  b: tf.TensorInfo,
  p: ProductShape,
  attrs: ProductAttrs,
  count = 1,
): tf.TensorInfo {
  const out = backend.makeOutput(p.shape, 'float32');
  if (p.m * p.n === 0) return out;
  if (p.k === 0) {
    backend.typedArrayFromHeap(out).fill(0);
    return out;
  }
  const [aAt, bAt, cAt] = [a, b, out].map((t) => backend.getMemoryOffset(t.dataId));
  const product = {
    a: aAt,
    b: bAt,
    c: cAt,
    m: p.m,
    k: p.k,
    n: p.n,
    transposeA: Boolean(attrs.transposeA),
    transposeB: Boolean(attrs.transposeB),
  };
  heapKernelsOf(backend.wasm).products(product, count, [p.m * p.k * 4, p.k * p.n * 4, p.m * p.n * 4]);
  return out;
}

/** A 2-D product on XNNPACK (tfjs's BatchMatMul without transposes), transposing operands explicitly first. */
function xnnpackProduct(
  backend: WasmBackend,
  a: tf.TensorInfo,
  b: tf.TensorInfo,
  p: ProductShape,
  attrs: ProductAttrs,
): tf.TensorInfo {
  const kernel = (name: string) => tf.getKernel(name, 'wasm')!.kernelFunc;
  const temporaries: tf.TensorInfo[] = [];
  const transposed = (t: tf.TensorInfo, rows: number, cols: number) => {
    const out = kernel('Transpose')({
      inputs: { x: { ...t, shape: [rows, cols] } },
      backend: backend as never,
      attrs: { perm: [1, 0] },
    }) as tf.TensorInfo;
    temporaries.push(out);
    return out;
  };
  const left = attrs.transposeA ? transposed(a, p.k, p.m) : a;
  const right = attrs.transposeB ? transposed(b, p.n, p.k) : b;
  const out = kernel('BatchMatMul')({
    inputs: { a: { ...left, shape: [1, p.m, p.k] }, b: { ...right, shape: [1, p.k, p.n] } },
    backend: backend as never,
    attrs: { transposeA: false, transposeB: false },
  }) as tf.TensorInfo;
  for (const t of temporaries) backend.disposeData(t.dataId);
  return { ...out, shape: p.shape };
}

/** XNNPACK for 2-D products when tfjs-wasm runs it on more threads than ours. */
function prefersXnnpack(backend: WasmBackend): boolean {
  return backend.wasm.tfjs.getThreadsCount() > heapKernelsOf(backend.wasm).threads();
}

/** Registers both kernels on tfjs-wasm (before `tf.setBackend('wasm')`); a second call does nothing. */
export function registerWasmMatMulKernels(): void {
  if (tf.getKernel(MATMUL_KERNEL, 'wasm')) return;
  tf.registerKernel({
    kernelName: MATMUL_KERNEL,
    backendName: 'wasm',
    kernelFunc: ({ inputs, backend, attrs }) => {
      const { a, b } = inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
      const wasm = backend as unknown as WasmBackend;
      const p = matMulShape(a, b, attrs as ProductAttrs);
      return p.k > 0 && prefersXnnpack(wasm)
        ? xnnpackProduct(wasm, a, b, p, attrs as ProductAttrs)
        : heapProducts(wasm, a, b, p, attrs as ProductAttrs);
    },
  });
  tf.registerKernel({
    kernelName: BATCH_MATMUL_KERNEL,
    backendName: 'wasm',
    kernelFunc: ({ inputs, backend, attrs }) => {
      const { a, b } = inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
      const p = batchMatMulShape(a, b, attrs as ProductAttrs);
      return heapProducts(backend as unknown as WasmBackend, a, b, p, attrs as ProductAttrs, p.batch);
    },
  });
}

/** Runs `kernel` (MATMUL_KERNEL or BATCH_MATMUL_KERNEL) with the transpose flags. */
export function product(
  kernel: typeof MATMUL_KERNEL | typeof BATCH_MATMUL_KERNEL,
  a: tf.Tensor,
  b: tf.Tensor,
  attrs: ProductAttrs = {},
): tf.Tensor {
  return run(kernel, a, b, attrs);
}
