/**
 * CAUSAL_ATTENTION_KERNEL and its gradient on tfjs-wasm: training's attention, softmax(q·kᵀ·scale + bias)·v
 * over a whole sequence (no cache: the T queries are the T keys), with its probabilities kept for the
 * backward pass. As tfjs ops it was six products, a scale, a mask add, a softmax and their gradients, every
 * query against every key although the causal mask drops the keys after its own.
 *
 * The forward pass is the prompt kernel's (wasm-attention.ts: queries in bunches of 64 positions, each
 * scored only against the keys up to its own last position), writing its probabilities to a second output
 * in the bunches' layout: a row's outputs are the prompt kernel's bits. The backward pass goes by the same
 * bunches, per bunch and repeat of the query heads that share a key/value head:
 *   dP = dO·V[:keys]ᵀ;  dS = P∘(dP − Σ dP∘P)·scale (attention.ts's softmaxGradRows);  dQ = dS·K[:keys];
 *   dV[:keys] += Pᵀ·dO;  dK[:keys] += dSᵀ·Q.
 * The products of all bunches and repeats go in one phase each (heap-kernels.ts's together()), their dV
 * and dK parts into scratch of their own, summed into dV and dK per group in the order of the bunches.
 * Causal skipping saves what the bunches leave out: about a third of the products at T = 160.
 */
import * as tf from '@tensorflow/tfjs';
import { CAUSAL_ATTENTION_DX_KERNEL, CAUSAL_ATTENTION_KERNEL } from './fused.ts';
import {
  attendInBunches,
  bunches,
  registerOnWasm,
  wasmAttentionFits,
  type Bunch,
  type Shape,
} from './wasm-attention.ts';
import { heapKernelsOf, type HeapKernels, type TfjsWasmBackend } from './wasm-simd/heap-kernels.ts';

type Info = tf.TensorInfo;

/** The layer's sizes and bunches: q [B, G, R, D] (R = repeats·T), k, v [B, G, T, D], bias [T, T] | [B, 1, 1, T, T]. */
function layout(q: Info, k: Info, bias: Info, T: number): { shape: Shape; list: Bunch[]; scoreFloats: number } {
  const [B, G, R, D] = q.shape;
  const Tk = k.shape[2];
  if (Tk !== T || R % T !== 0 || !wasmAttentionFits(Tk, D))
    throw new Error(
      `wasm causal attention: ${R} query rows at ${T} positions over ${Tk} keys of ${D} floats; it takes a whole sequence (keys = positions), in whole vectors of 4`,
    );
  const shape: Shape = {
    groups: B * G,
    G,
    repeats: R / T,
    T,
    Tk,
    D,
    perBatchMask: bias.shape.length === 5,
    maskRowBytes: Tk * 4,
  };
  const list = bunches(T, Tk, shape.groups * shape.repeats, true);
  const last = list[list.length - 1];
  return { shape, list, scoreFloats: last.at / 4 + shape.groups * shape.repeats * last.rows * last.keys };
}

const address = (backend: TfjsWasmBackend, t: Info) => backend.getMemoryOffset(t.dataId);

/** [out [B, G, R, D], probabilities in the bunches' layout (wasm-attention.ts's Bunch.at)]. */
function forward(backend: TfjsWasmBackend, q: Info, k: Info, v: Info, bias: Info, scale: number, T: number): Info[] {
  const { shape, list, scoreFloats } = layout(q, k, bias, T);
  const kernels = heapKernelsOf(backend.wasm);
  const out = backend.makeOutput(q.shape, 'float32');
  const probabilities = backend.makeOutput([scoreFloats], 'float32');
  const at = (t: Info) => address(backend, t);
  const operands = { q: at(q), k: at(k), v: at(v), out: at(out), bias: at(bias), scores: at(probabilities) };
  kernels.inPhases(kernels.threads(), () => attendInBunches(kernels, operands, shape, scale, list));
  return [out, probabilities];
}

interface GradientOperands {
  dy: number;
  q: number;
  k: number;
  v: number;
  probabilities: number;
  dq: number;
  dk: number;
  dv: number;
  /** dS in the probabilities' layout. */
  dScores: number;
  /** Each bunch and repeat's part of dV, then of dK: [groups, keys, D] each, in order. */
  parts: number;
}

/** The backward pass's phases (see the header); dk and dv start at zero. */
function gradientInBunches(
  kernels: HeapKernels,
  at: GradientOperands,
  shape: Shape,
  scale: number,
  list: Bunch[],
): void {
  const l = gradientLayout(at, shape, list);
  // dP = dO · V[:keys]ᵀ
  probabilityGradients(kernels, at, shape, l);
  // dS = P∘(dP − Σ dP∘P)·scale, in place
  kernels.together(() => {
    for (const b of list)
      kernels.softmaxGrad(
        at.dScores + b.at,
        at.probabilities + b.at,
        at.dScores + b.at,
        shape.groups * shape.repeats * b.rows,
        b.keys,
        scale,
      );
  });
  // dQ = dS·K[:keys]; the parts Pᵀ·dO of dV and dSᵀ·Q of dK
  queryGradientAndParts(kernels, at, shape, l);
  // dV, dK: each group's parts summed in order
  sumParts(kernels, at, shape, l);
}

/** Where each bunch and repeat's rows, scores and parts of dV and dK lie. */
interface GradientLayout {
  /** Every bunch once per repeat, in order. */
  pairs: BunchRepeat[];
  scoresOf: (base: number, p: BunchRepeat) => number;
  rowsOf: (base: number, p: BunchRepeat) => number;
  scoreStride: (b: Bunch) => number;
  rowStride: number;
  keyStride: number;
  dvPart: (i: number) => number;
  dkPart: (i: number) => number;
}

interface BunchRepeat {
  b: Bunch;
  r: number;
}

function gradientLayout(at: GradientOperands, shape: Shape, list: Bunch[]): GradientLayout {
  const { groups, repeats, T, Tk, D } = shape;
  const R = repeats * T;
  const repeatBytes = (b: Bunch) => b.rows * b.keys * 4;
  const pairs = list.flatMap((b) => Array.from({ length: repeats }, (_, r) => ({ b, r })));
  const partBytes = pairs.map(({ b }) => groups * b.keys * D * 4);
  const dvPart = (i: number) => at.parts + partBytes.slice(0, i).reduce((s, n) => s + n, 0);
  return {
    pairs,
    scoresOf: (base, { b, r }) => base + b.at + r * repeatBytes(b),
    rowsOf: (base, { b, r }) => base + (r * T + b.t0) * D * 4,
    scoreStride: (b) => repeats * repeatBytes(b),
    rowStride: R * D * 4,
    keyStride: Tk * D * 4,
    dvPart,
    dkPart: (i) => dvPart(pairs.length) + partBytes.slice(0, i).reduce((s, n) => s + n, 0),
  };
}

function probabilityGradients(kernels: HeapKernels, at: GradientOperands, shape: Shape, l: GradientLayout): void {
  const { groups, D } = shape;
  kernels.together(() => {
    for (const p of l.pairs)
      kernels.products(
        {
          a: l.rowsOf(at.dy, p),
          b: at.v,
          c: l.scoresOf(at.dScores, p),
          m: p.b.rows,
          k: D,
          n: p.b.keys,
          transposeA: false,
          transposeB: true,
        },
        groups,
        [l.rowStride, l.keyStride, l.scoreStride(p.b)],
      );
  });
}

function queryGradientAndParts(kernels: HeapKernels, at: GradientOperands, shape: Shape, l: GradientLayout): void {
  const { groups, D } = shape;
  kernels.together(() => {
    l.pairs.forEach((p, i) => {
      const { rows, keys } = p.b;
      kernels.products(
        {
          a: l.scoresOf(at.dScores, p),
          b: at.k,
          c: l.rowsOf(at.dq, p),
          m: rows,
          k: keys,
          n: D,
          transposeA: false,
          transposeB: false,
        },
        groups,
        [l.scoreStride(p.b), l.keyStride, l.rowStride],
      );
      kernels.products(
        {
          a: l.scoresOf(at.probabilities, p),
          b: l.rowsOf(at.dy, p),
          c: l.dvPart(i),
          m: keys,
          k: rows,
          n: D,
          transposeA: true,
          transposeB: false,
        },
        groups,
        [l.scoreStride(p.b), l.rowStride, keys * D * 4],
      );
      kernels.products(
        {
          a: l.scoresOf(at.dScores, p),
          b: l.rowsOf(at.q, p),
          c: l.dkPart(i),
          m: keys,
          k: rows,
          n: D,
          transposeA: true,
          transposeB: false,
        },
        groups,
        [l.scoreStride(p.b), l.rowStride, keys * D * 4],
      );
    });
  });
}

function sumParts(kernels: HeapKernels, at: GradientOperands, shape: Shape, l: GradientLayout): void {
  const { groups, D } = shape;
  kernels.together(() => {
    kernels.sumInto(
      at.dv,
      l.keyStride,
      groups,
      l.pairs.map(({ b }, i) => ({ from: l.dvPart(i), stride: b.keys * D * 4, floats: b.keys * D })),
    );
    kernels.sumInto(
      at.dk,
      l.keyStride,
      groups,
      l.pairs.map(({ b }, i) => ({ from: l.dkPart(i), stride: b.keys * D * 4, floats: b.keys * D })),
    );
  });
}

/** [dq, dk, dv] from dy (the output's gradient), the inputs and the forward pass's probabilities. */
function backward(
  backend: TfjsWasmBackend,
  dy: Info,
  q: Info,
  k: Info,
  v: Info,
  bias: Info,
  probabilities: Info,
  scale: number,
  T: number,
): Info[] {
  const { shape, list, scoreFloats } = layout(q, k, bias, T);
  const kernels = heapKernelsOf(backend.wasm);
  const outputs = [
    backend.makeOutput(q.shape, 'float32'),
    backend.makeOutput(k.shape, 'float32'),
    backend.makeOutput(v.shape, 'float32'),
  ];
  const partFloats = 2 * list.reduce((sum, b) => sum + shape.repeats * shape.groups * b.keys * shape.D, 0);
  let scratch = 0;
  try {
    scratch = backend.wasm._malloc((scoreFloats + partFloats) * 4) >>> 0;
    if (!scratch)
      throw new Error(
        `wasm causal attention: the heap could not allocate ${(scoreFloats + partFloats) * 4} bytes for its gradient`,
      );
    const [dq, dk, dv] = outputs.map((t) => address(backend, t));
    const floats = kernels.floats();
    floats.fill(0, dk / 4, dk / 4 + tf.util.sizeFromShape(k.shape));
    floats.fill(0, dv / 4, dv / 4 + tf.util.sizeFromShape(v.shape));
    const at = (t: Info) => address(backend, t);
    const operands = {
      dy: at(dy),
      q: at(q),
      k: at(k),
      v: at(v),
      probabilities: at(probabilities),
      dq,
      dk,
      dv,
      dScores: scratch,
      parts: scratch + scoreFloats * 4,
    };
    kernels.inPhases(kernels.threads(), () => gradientInBunches(kernels, operands, shape, scale, list));
    return outputs;
  } catch (error) {
    for (const t of outputs) backend.disposeData(t.dataId);
    throw error;
  } finally {
    if (scratch) backend.wasm._free(scratch);
  }
}

/** Registers the causal attention and its gradient on tfjs-wasm; needs wasm SIMD. */
export function registerWasmCausalAttention(): void {
  if (tf.getKernel(CAUSAL_ATTENTION_KERNEL, 'wasm')) return;
  registerOnWasm(CAUSAL_ATTENTION_KERNEL, (backend, { q, k, v, bias }, { scale, positions }) =>
    forward(backend, q, k, v, bias, scale, positions),
  );
  registerOnWasm(CAUSAL_ATTENTION_DX_KERNEL, (backend, { dy, q, k, v, bias, probabilities }, { scale, positions }) =>
    backward(backend, dy, q, k, v, bias, probabilities, scale, positions),
  );
}
