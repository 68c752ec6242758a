/**
 * fused.ts's ATTENTION_KERNEL on tfjs-wasm: generation's softmax(q·kᵀ·scale + bias)·v as one kernel
 * over the heap (the transformer's fusedAttention calls it where nothing needs a gradient: a prompt's
 * prefill). As tfjs ops it was seven (two products, a scale, a mask add, a softmax and reshapes), with
 * three score-sized tensors made and freed per layer, the scale, mask and softmax on one thread, and
 * every query scored against every key although the mask drops the keys after its own.
 *
 * Here the queries go in bunches of QUERY_BUNCH positions, and a bunch is scored only against the keys
 * up to its last position (rounded up to a multiple of 8): about 40% fewer multiply-adds and exps on a
 * long prompt. The products run on the heap gemm, the masked softmax on attention.ts's SIMD rows; the
 * whole layer is recorded as one program of phases that the kernel threads share (heap-kernels.ts's
 * inPhases).
 *
 * Rounding: each score and output is the gemm's one sum over its inputs in order, as tfjs's bmm ran it,
 * over every key the bunch keeps. With the key count a multiple of 8 every score column is a whole
 * strip (gemm.ts), so which bunch a row lands in never changes its real scores; the keys a bunch keeps
 * past a row's own are masked and add exp.ts's floor, 2⁻¹²⁶, which a sum of at least one absorbs.
 * So a row's outputs do not depend on how the batch pads it (tests/model/batch-invariance.test.ts). The
 * softmax's exp is exp.ts's (about 1 ulp from the true value), as in a decoding step.
 */
import * as tf from '@tensorflow/tfjs';
import { ATTENTION_KERNEL, MASKED_SOFTMAX_DX_KERNEL, MASKED_SOFTMAX_KERNEL } from './fused.ts';
import { heapKernelsOf, type HeapKernels, type SoftmaxMask, type TfjsWasmBackend } from './wasm-simd/heap-kernels.ts';

type Info = tf.TensorInfo;

/** Query positions per bunch: the keys a bunch keeps past its rows' own are at most this many. */
const QUERY_BUNCH = 64;
/** Keys are kept in multiples of this (gemm.ts's strips), so that every kept score column is computed alike. */
const KEY_ALIGN = 8;

/** Whether the wasm kernel takes these operands: keys and heads in whole vectors of 4. */
export function wasmAttentionFits(keys: number, headDim: number): boolean {
  return keys % 4 === 0 && headDim % 4 === 0;
}

/** A bunch of query positions [t0, t0 + rows) and the first `keys` keys it is scored against. */
export interface Bunch {
  t0: number;
  rows: number;
  keys: number;
  /** Byte offset of its scores in the score buffer: [groups][repeats][rows][keys]. */
  at: number;
}

/** The bunches of T positions over Tk keys (the last T of them being the queries'); one bunch of every key where the mask is not causal. */
export function bunches(T: number, Tk: number, groupsTimesRepeats: number, causal: boolean): Bunch[] {
  const out: Bunch[] = [];
  const size = causal && Tk % KEY_ALIGN === 0 ? QUERY_BUNCH : T;
  let at = 0;
  for (let t0 = 0; t0 < T; t0 += size) {
    const rows = Math.min(size, T - t0);
    const keys = size === T ? Tk : Math.min(Tk, Math.ceil((Tk - T + t0 + rows) / KEY_ALIGN) * KEY_ALIGN);
    out.push({ t0, rows, keys, at });
    at += groupsTimesRepeats * rows * keys * 4;
  }
  return out;
}

/** The layer's sizes: q [groups, repeats·T, D] (groups = B·G), k, v [groups, Tk, D]; the mask's rows maskRowBytes apart (0: one row for all). */
export interface Shape {
  groups: number;
  G: number;
  repeats: number;
  T: number;
  Tk: number;
  D: number;
  perBatchMask: boolean;
  maskRowBytes: number;
}

export interface Operands {
  q: number;
  k: number;
  v: number;
  out: number;
  bias: number;
  scores: number;
}

/**
 * The layer's attention as phases: per bunch and repeat, the scores of every group; the masked softmax of
 * each bunch; per bunch and repeat, the outputs. q [groups, R, D] with R = repeats·T, k, v [groups, Tk, D].
 */
export function attendInBunches(kernels: HeapKernels, at: Operands, shape: Shape, scale: number, list: Bunch[]): void {
  const { groups, G, repeats, T, Tk, D, perBatchMask, maskRowBytes } = shape;
  const R = repeats * T;
  const repeatBytes = (b: Bunch) => b.rows * b.keys * 4;
  for (const b of list) {
    for (let r = 0; r < repeats; r++) {
      const q = at.q + (r * T + b.t0) * D * 4;
      kernels.products(
        {
          a: q,
          b: at.k,
          c: at.scores + b.at + r * repeatBytes(b),
          m: b.rows,
          k: D,
          n: b.keys,
          transposeA: false,
          transposeB: true,
        },
        groups,
        [R * D * 4, Tk * D * 4, repeats * repeatBytes(b)],
      );
    }
  }
  for (const b of list) {
    // Score row i of this bunch is position t0 + (i mod rows), of batch row ⌊i / (G·repeats·rows)⌋ where each has a mask.
    const mask = {
      period: b.rows,
      rowBytes: maskRowBytes,
      groupRows: perBatchMask ? G * repeats * b.rows : 1,
      groupBytes: perBatchMask ? T * maskRowBytes : 0,
    };
    kernels.maskedSoftmax(
      at.scores + b.at,
      at.bias + b.t0 * maskRowBytes,
      groups * repeats * b.rows,
      b.keys,
      mask,
      scale,
    );
  }
  for (const b of list) {
    for (let r = 0; r < repeats; r++) {
      const out = at.out + (r * T + b.t0) * D * 4;
      kernels.products(
        {
          a: at.scores + b.at + r * repeatBytes(b),
          b: at.v,
          c: out,
          m: b.rows,
          k: b.keys,
          n: D,
          transposeA: false,
          transposeB: false,
        },
        groups,
        [repeats * repeatBytes(b), Tk * D * 4, R * D * 4],
      );
    }
  }
}

/** q [B, G, R, D], k, v [B, G, Tk, D], bias? [T, Tk] | [B, 1, 1, T, Tk] (R = repeats·T, row r at position r mod T). */
function attention(
  backend: TfjsWasmBackend,
  q: Info,
  k: Info,
  v: Info,
  bias: Info | undefined,
  scale: number,
  T: number,
): Info {
  const [B, G, R, D] = q.shape;
  const Tk = k.shape[2];
  if (!wasmAttentionFits(Tk, D) || R % T !== 0 || T > Tk)
    throw new Error(
      `wasm attention: ${Tk} keys of ${D} floats for ${R} rows at ${T} positions; keys and heads must be whole vectors of 4`,
    );
  const kernels = heapKernelsOf(backend.wasm);
  const groups = B * G;
  // Without a mask every query sees every key: all R rows of a group are one bunch, each reading one row of zeros.
  const shape: Shape = bias
    ? { groups, G, repeats: R / T, T, Tk, D, perBatchMask: bias.shape.length === 5, maskRowBytes: Tk * 4 }
    : { groups, G, repeats: 1, T: R, Tk, D, perBatchMask: false, maskRowBytes: 0 };
  const list = bunches(shape.T, Tk, groups * shape.repeats, Boolean(bias));
  const last = list[list.length - 1];
  const scoreBytes = last.at + groups * shape.repeats * last.rows * last.keys * 4;
  const out = backend.makeOutput(q.shape, 'float32');
  let scores = 0;
  let zeros = 0;
  try {
    scores = backend.wasm._malloc(scoreBytes) >>> 0;
    zeros = bias ? 0 : backend.wasm._malloc(Tk * 4) >>> 0;
    if (!scores || (!bias && !zeros))
      throw new Error(`wasm attention: the heap could not allocate ${scoreBytes} bytes of scores`);
    if (zeros) kernels.floats().fill(0, zeros / 4, zeros / 4 + Tk);
    const at = (t: Info) => backend.getMemoryOffset(t.dataId);
    const operands = { q: at(q), k: at(k), v: at(v), out: at(out), bias: bias ? at(bias) : zeros, scores };
    kernels.inPhases(kernels.threads(), () => attendInBunches(kernels, operands, shape, scale, list));
    return out;
  } catch (error) {
    backend.disposeData(out.dataId);
    throw error;
  } finally {
    if (scores) backend.wasm._free(scores);
    if (zeros) backend.wasm._free(zeros);
  }
}

/**
 * MASKED_SOFTMAX_KERNEL: scores [B, G, R, Tk] (Tk a multiple of 4), bias [T, Tk] | [B, 1, 1, T, Tk] →
 * softmax(scores·scale + bias) per row, the rows shared between threads, each copied and then turned
 * into probabilities in place by the prompt kernel's softmax rows (so training's probabilities are
 * computed as a prompt's are, exp.ts's exp included).
 */
function maskedSoftmax(backend: TfjsWasmBackend, scores: Info, bias: Info, scale: number): Info {
  const [B, G, R, Tk] = scores.shape;
  const T = bias.shape[bias.shape.length - 2];
  if (Tk % 4 !== 0 || R % T !== 0)
    throw new Error(
      `wasm masked softmax: ${R} rows of ${Tk} keys at ${T} positions; keys must be whole vectors of 4 and rows whole positions`,
    );
  const perBatchMask = bias.shape.length === 5;
  const mask: SoftmaxMask = {
    period: T,
    rowBytes: Tk * 4,
    groupRows: perBatchMask ? G * R : B * G * R,
    groupBytes: perBatchMask ? T * Tk * 4 : 0,
  };
  const out = backend.makeOutput(scores.shape, 'float32');
  const at = (t: Info) => backend.getMemoryOffset(t.dataId);
  heapKernelsOf(backend.wasm).maskedSoftmax(at(out), at(bias), B * G * R, Tk, mask, scale, at(scores));
  return out;
}

/** MASKED_SOFTMAX_DX_KERNEL: dy, y [..., Tk] → y·(dy − Σ dy·y)·scale per row. */
function maskedSoftmaxDx(backend: TfjsWasmBackend, dy: Info, y: Info, scale: number): Info {
  const Tk = y.shape[y.shape.length - 1];
  const out = backend.makeOutput(y.shape, 'float32');
  const at = (t: Info) => backend.getMemoryOffset(t.dataId);
  heapKernelsOf(backend.wasm).softmaxGrad(at(dy), at(y), at(out), tf.util.sizeFromShape(y.shape) / Tk, Tk, scale);
  return out;
}

/** The attention kernels' attributes (each reads those it needs). */
export interface AttentionAttrs {
  scale: number;
  positions: number;
}

/** Registers `kernelName` on tfjs-wasm as `run` over its named inputs, the backend and its attributes. */
export function registerOnWasm(
  kernelName: string,
  run: (backend: TfjsWasmBackend, inputs: Record<string, Info>, attrs: AttentionAttrs) => Info | Info[],
): void {
  tf.registerKernel({
    kernelName,
    backendName: 'wasm',
    kernelFunc: ({ inputs, backend, attrs }) =>
      run(backend as unknown as TfjsWasmBackend, inputs as Record<string, Info>, attrs as unknown as AttentionAttrs),
  });
}

/** Registers ATTENTION_KERNEL and the masked softmax with its gradient on tfjs-wasm; needs wasm SIMD. */
export function registerWasmAttention(): void {
  if (tf.getKernel(ATTENTION_KERNEL, 'wasm')) return;
  registerOnWasm(MASKED_SOFTMAX_KERNEL, (backend, { scores, bias }, { scale }) =>
    maskedSoftmax(backend, scores, bias, scale),
  );
  registerOnWasm(MASKED_SOFTMAX_DX_KERNEL, (backend, { dy, y }, { scale }) => maskedSoftmaxDx(backend, dy, y, scale));
  registerOnWasm(ATTENTION_KERNEL, (backend, { q, k, v, bias }, { scale, positions }) =>
    attention(backend, q, k, v, bias, scale, positions),
  );
}
