/**
 * DECODE_STEP_KERNEL on tfjs-wasm (decode-step.ts has the contract): one decoding step of every layer
 * on wasm-simd/'s kernels, called by heap address. A step's numbers are a few hundred per row, so what
 * costs is not arithmetic but everything around it: as tfjs ops the step was ~170 kernels at ≈ 15 µs of
 * engine and allocation each, then as calls to the registered kernels ~100 tensors made and freed.
 * Here every temporary lives in one heap block taken per step, products read packed copies of the
 * weights (packed-weights.ts), attention runs per key/value head on the cache in place
 * (attention.ts), and the small elementwise work (bias, residual, LoRA's scaled add) is a SIMD kernel too.
 * Only the outputs are tensors: the logits and each layer's extended keys and values.
 *
 * A step is set up for all its rows (the arena, the embeddings, the outputs, the attention mask), then
 * computed by the kernels alone: with kernel threads and a few rows, recorded as a program of phases that
 * the threads share (heap-kernels.ts's inPhases), so that they meet between its phases instead of being
 * handed each of the step's ~100 kernels, which at a decoding step's sizes cost more than the split saved.
 */
import * as tf from '@tensorflow/tfjs';
import { ATTENTION_MASKED, decodeInput, partsOf, type DecodeStepAttrs } from './decode-step.ts';
import { DECODE_STEP_KERNEL } from './fused.ts';
import { heapKernelsOf, paddedKeys, type HeapKernels, type TfjsWasmBackend } from './wasm-simd/heap-kernels.ts';
import { packedWeightsOf, type PackedWeights } from './wasm-simd/packed-weights.ts';

type Info = tf.TensorInfo;

/** The step's temporaries: one heap block, carved in order into 16-byte-aligned arrays. */
class Arena {
  private readonly base: number;
  private used = 0;

  constructor(
    private readonly backend: TfjsWasmBackend,
    private readonly bytes: number,
  ) {
    this.base = backend.wasm._malloc(bytes) >>> 0;
    if (!this.base) throw new Error(`wasm decoding: the heap could not allocate ${bytes} bytes for a step`);
  }

  /** The address of `floats` fresh floats. */
  take(floats: number): number {
    const at = this.base + this.used;
    this.used += Math.ceil(floats / 4) * 16;
    if (this.used > this.bytes) throw new Error('wasm decoding: arena overrun (a size was left out of scratchPerRow)');
    return at;
  }

  free(): void {
    this.backend.wasm._free(this.base);
  }
}

interface Step {
  backend: TfjsWasmBackend;
  kernels: HeapKernels;
  packed: PackedWeights;
  inputs: Record<string, Info>;
  attrs: DecodeStepAttrs;
  rows: number;
  /** The model's sizes. */
  C: number;
  I: number;
  /** The widest projection output per row (a LoRA slot's floats per row). */
  widest: number;
  /** Scratch shared by every layer (each is written before it is read): arrays of `rows` rows. */
  at: Scratch;
  /** Each layer's extended keys and values, and the logits: the step's outputs. */
  keys: Info[];
  values: Info[];
  logits: Info | null;
}

/** Projections of one input that share its phases (q, k and v; gate and up) at most: slots of LoRA scratch. */
const GROUPED_PROJECTIONS = 3;

type Scratch = {
  x: number;
  h: number;
  q: number;
  k: number;
  v: number;
  heads: number;
  out: number;
  gate: number;
  up: number;
  loraMid: number;
  loraOut: number;
  bias: number;
  cos: number;
  sin: number;
};

/** Floats per row of each of Step's scratch arrays, for a step with `keys` keys. */
function scratchPerRow(attrs: DecodeStepAttrs, keys: number, C: number, I: number): Scratch {
  const { numHeads: H, numKvHeads: Hkv, headDim: D } = attrs;
  const widest = widestProjection(attrs, C, I);
  return {
    x: C, h: C, q: H * D, k: Hkv * D, v: Hkv * D, heads: H * D, out: C, gate: I, up: I,
    loraMid: GROUPED_PROJECTIONS * attrs.loraRank, loraOut: GROUPED_PROJECTIONS * widest, bias: Hkv * paddedKeys(keys), cos: D, sin: D,
  }; // prettier-ignore
}

/** The widest projection output per row: of the residual stream, the MLP, or the query heads. */
const widestProjection = (attrs: DecodeStepAttrs, C: number, I: number) =>
  Math.max(C, I, attrs.numHeads * attrs.headDim);

const address = (step: Step, t: Info) => step.backend.getMemoryOffset(t.dataId);

/**
 * dsts[i] [rows, out] = src [rows, in] · W (+ bias) (+ scale·(src·A)·B) for each projection modules[i] of
 * `layer`, all reading src. The projections go side by side, in three phases at most when recorded
 * (heap-kernels.ts's together()): the products by W and A; the biases and the products by B; the
 * adapters' adds. One after another they were up to five phases each, and a phase is a meeting of the
 * threads. Each element's operations and their order are a single projection's, so the bits are too.
 */
function linears(step: Step, layer: number, modules: readonly string[], src: number, dsts: readonly number[]): void {
  const { inputs, kernels, rows, at } = step;
  const parts = modules.map((module) => {
    const names = partsOf(module);
    const w = inputs[decodeInput(layer, names.weight)];
    const [loraA, loraB] = [inputs[decodeInput(layer, names.loraA)], inputs[decodeInput(layer, names.loraB)]];
    return { w, bias: inputs[decodeInput(layer, names.bias)], lora: loraA && loraB ? { A: loraA, B: loraB } : null };
  });
  const mid = (i: number) => at.loraMid + i * rows * step.attrs.loraRank * 4;
  const out = (i: number) => at.loraOut + i * rows * step.widest * 4;
  kernels.together(() => {
    parts.forEach(({ w, lora }, i) => {
      const [k, n] = w.shape;
      kernels.productPacked({ a: src, b: address(step, w), c: dsts[i], m: rows, k, n }, step.packed.of(w));
      if (lora)
        kernels.product({
          a: src,
          b: address(step, lora.A),
          c: mid(i),
          m: rows,
          k,
          n: lora.A.shape[1],
          transposeA: false,
          transposeB: false,
        });
    });
  });
  kernels.together(() => {
    parts.forEach(({ w, bias, lora }, i) => {
      const n = w.shape[1];
      if (bias)
        for (let row = 0; row < rows; row++) kernels.addScaled(dsts[i] + row * n * 4, address(step, bias), n, 1);
      if (lora)
        kernels.product({
          a: mid(i),
          b: address(step, lora.B),
          c: out(i),
          m: rows,
          k: lora.B.shape[0],
          n,
          transposeA: false,
          transposeB: false,
        });
    });
  });
  kernels.together(() => {
    parts.forEach(({ w, lora }, i) => {
      if (lora) kernels.addScaled(dsts[i], out(i), rows * w.shape[1], step.attrs.loraScale); // float32 rounding, as tfjs's mul then add
    });
  });
}

/** Copies row `row` of a [rows, width] table tensor to `to` on the heap. */
function copyRow(step: Step, heap: Float32Array, table: Info, row: number, width: number, to: number): void {
  const from = address(step, table) / 4 + row * width;
  heap.copyWithin(to / 4, from, from + width);
}

/** The rows' embeddings into x, and the rope tables' rows at each row's position into cos, sin. */
function stepInputs(step: Step): void {
  const { inputs, attrs, rows, C, at } = step;
  const V = inputs.embed.shape[0];
  const D = attrs.headDim;
  const heap = step.kernels.floats();
  const ids = step.backend.typedArrayFromHeap(inputs.ids);
  for (let b = 0; b < rows; b++) {
    const id = ids[b];
    if (!(Number.isInteger(id) && id >= 0 && id < V))
      throw new Error(`token id ${id} is outside the model's vocabulary of ${V}`);
    copyRow(step, heap, inputs.embed, id, C, at.x + b * C * 4);
    copyRow(step, heap, inputs.ropeCos, attrs.positions[b], D, at.cos + b * D * 4);
    copyRow(step, heap, inputs.ropeSin, attrs.positions[b], D, at.sin + b * D * 4);
  }
}

/** The additive attention mask of every row and key/value head: 0, or ATTENTION_MASKED on a padded key. */
function attentionMask(step: Step): void {
  const { attrs, rows, at } = step;
  const Hkv = attrs.numKvHeads;
  const stride = paddedKeys(attrs.past + 1);
  const bias = step.kernels
    .floats()
    .subarray(at.bias / 4, at.bias / 4 + rows * Hkv * stride)
    .fill(0);
  if (!attrs.keyValid) return;
  for (let group = 0; group < rows * Hkv; group++) {
    const valid = attrs.keyValid[Math.floor(group / Hkv)];
    for (let j = 0; j <= attrs.past; j++) if (!valid[j]) bias[group * stride + j] = ATTENTION_MASKED;
  }
}

/**
 * Rows from which a step runs as a recorded program on the kernel threads (inPhases). Below, the step's
 * products are too small to split and recording costs more than it saves: micro preset, 2 threads, a
 * batch-1 step took 1.05–1.24 ms recorded and 0.95–1.0 ms with its kernels split one by one, a batch-4 step
 * 1.32–1.39 against 1.56 ms, batch 16 4.5–4.7 against 6.0 ms.
 */
const PHASED_ROWS = 4;

/** How far each cache buffer this kernel wrote is filled (keyed by its dataId, so an entry dies with the buffer). */
const filledTo = new WeakMap<object, number>();
/** Positions a cache grown by a step leaves free, so that the steps after append in place. */
const CACHE_HEADROOM = 64;

/**
 * The output for the cache [rows, Hkv, capacity, D] (`past` positions filled) extended by this step's
 * position: the input's own buffer when the capacity has room and nothing was written at `past` yet (a
 * second step from the same cache, a fork, must not overwrite the first's); otherwise a new buffer with
 * CACHE_HEADROOM positions to spare, or room for attrs.reserve, and the past copied in. The step writes
 * position `past` (cacheFresh).
 */
function extendedCache(step: Step, cache: Info): Info {
  const { backend, attrs } = step;
  const [rows, Hkv, capacity, D] = cache.shape;
  const past = attrs.past;
  const inPlace = past < capacity && (filledTo.get(cache.dataId) ?? past) === past;
  if (inPlace) {
    backend.incRef(cache.dataId);
    filledTo.set(cache.dataId, past + 1);
    return { dataId: cache.dataId, shape: cache.shape, dtype: 'float32' };
  }
  const out = backend.makeOutput([rows, Hkv, Math.max(past + 1 + CACHE_HEADROOM, attrs.reserve), D], 'float32');
  filledTo.set(out.dataId, past + 1);
  const grown = out.shape[2];
  const heap = step.kernels.floats();
  const [from, to] = [address(step, cache) / 4, address(step, out) / 4];
  for (let head = 0; head < rows * Hkv; head++)
    heap.copyWithin(to + head * grown * D, from + head * capacity * D, from + (head * capacity + past) * D);
  return out;
}

/** Writes this step's keys or values [rows, Hkv, D] at `fresh` into the extended cache at position past. */
function cacheFresh(step: Step, cache: Info, fresh: number): void {
  const [rows, Hkv, capacity, D] = cache.shape;
  step.kernels.copyRows(address(step, cache) + step.attrs.past * D * 4, fresh, rows * Hkv, D, capacity * D * 4, D * 4);
}

/**
 * softmax(q·kᵀ/√D + mask)·v for one position into step.at.heads [rows, H·D], from q [rows, H, D] and
 * the extended keys and values [rows, Hkv, capacity, D] (past + 1 filled): the query heads sharing a
 * key/value head go together, one group per row and key/value head, each with its row's mask.
 */
function attend(step: Step, keys: Info, values: Info): void {
  const { rows, at } = step;
  const { numHeads: H, numKvHeads: Hkv, headDim: D } = step.attrs;
  const rep = H / Hkv;
  const Tk = step.attrs.past + 1;
  const stride = paddedKeys(Tk);
  const headsBytes = rep * D * 4;
  const cacheBytes = keys.shape[2] * D * 4;
  step.kernels.attendGroups(
    { q: at.q, k: address(step, keys), v: address(step, values), bias: at.bias, out: at.heads },
    { q: headsBytes, k: cacheBytes, v: cacheBytes, bias: stride * 4, out: headsBytes },
    rows * Hkv,
    rep,
    Tk,
    D,
    1 / Math.sqrt(D),
  );
}

/** One layer on the residual stream step.at.x (updated in place). */
function decodeLayer(step: Step, i: number): void {
  const { kernels, inputs, attrs, rows, C, I, at } = step;
  const { numHeads: H, numKvHeads: Hkv, headDim: D } = attrs;
  kernels.rmsNorm(at.x, address(step, inputs[decodeInput(i, 'inputNorm')]), at.h, rows, C, attrs.eps);
  linears(step, i, ['q_proj', 'k_proj', 'v_proj'], at.h, [at.q, at.k, at.v]);
  const [qNorm, kNorm] = [inputs[decodeInput(i, 'qNorm')], inputs[decodeInput(i, 'kNorm')]];
  if (qNorm) kernels.rmsNorm(at.q, address(step, qNorm), at.q, rows * H, D, attrs.eps);
  if (kNorm) kernels.rmsNorm(at.k, address(step, kNorm), at.k, rows * Hkv, D, attrs.eps);
  rotate(step, at.q, H);
  rotate(step, at.k, Hkv);
  cacheFresh(step, step.keys[i], at.k);
  cacheFresh(step, step.values[i], at.v);
  attend(step, step.keys[i], step.values[i]);
  linears(step, i, ['o_proj'], at.heads, [at.out]);
  kernels.addScaled(at.x, at.out, rows * C, 1);

  kernels.rmsNorm(at.x, address(step, inputs[decodeInput(i, 'postNorm')]), at.h, rows, C, attrs.eps);
  linears(step, i, ['gate_proj', 'up_proj'], at.h, [at.gate, at.up]);
  kernels.swiglu(at.gate, at.up, at.gate, rows * I);
  linears(step, i, ['down_proj'], at.gate, [at.out]);
  kernels.addScaled(at.x, at.out, rows * C, 1);
}

/** RoPE on `n` heads per row, in place (the kernel loads both halves of a head before it stores either). */
function rotate(step: Step, heads: number, n: number): void {
  step.kernels.rope(
    heads,
    step.at.cos,
    step.at.sin,
    heads,
    { rows: step.rows * n, D: step.attrs.headDim, T: 1, H: n },
    true,
    false,
  );
}

/** Every layer and the head: the step's logits. Kernels only (heap-kernels.ts's inPhases records it). */
function compute(step: Step): void {
  const { inputs, kernels, rows, C, at } = step;
  for (let i = 0; i < step.attrs.numLayers; i++) decodeLayer(step, i);
  kernels.rmsNorm(at.x, address(step, inputs.norm), at.h, rows, C, step.attrs.eps);
  kernels.productPacked(
    { a: at.h, b: address(step, inputs.head), c: address(step, step.logits!), m: rows, k: C, n: inputs.head.shape[1] },
    step.packed.of(inputs.head),
  );
}

/** The step's outputs; any made before a failure are freed. */
function decodeStep(backend: TfjsWasmBackend, inputs: Record<string, Info>, attrs: DecodeStepAttrs): Info[] {
  const kernels = heapKernelsOf(backend.wasm);
  const rows = inputs.ids.shape[0];
  const [C, I] = [inputs.embed.shape[1], inputs[decodeInput(0, partsOf('gate_proj').weight)].shape[1]];
  const perRow = scratchPerRow(attrs, attrs.past + 1, C, I);
  const arena = new Arena(
    backend,
    Object.values(perRow).reduce((sum, n) => sum + Math.ceil((rows * n) / 4) * 16, 0),
  );
  const step: Step = {
    backend,
    kernels,
    packed: packedWeightsOf(backend, kernels),
    inputs,
    attrs,
    rows,
    C,
    I,
    widest: widestProjection(attrs, C, I),
    at: {} as Scratch,
    keys: [],
    values: [],
    logits: null,
  };
  try {
    step.at = Object.fromEntries(
      Object.entries(perRow).map(([name, floats]) => [name, arena.take(rows * floats)]),
    ) as Scratch;
    for (let i = 0; i < attrs.numLayers; i++) {
      step.keys.push(extendedCache(step, inputs[decodeInput(i, 'cacheK')]));
      step.values.push(extendedCache(step, inputs[decodeInput(i, 'cacheV')]));
    }
    step.logits = backend.makeOutput([rows, 1, inputs.head.shape[1]], 'float32');
    stepInputs(step);
    attentionMask(step);
    if (rows < PHASED_ROWS)
      compute(step); // each kernel split on its own, if it is big enough
    else kernels.inPhases(kernels.threads(), () => compute(step));
    return [step.logits, ...step.keys, ...step.values];
  } catch (err) {
    for (const t of [step.logits, ...step.keys, ...step.values]) if (t) backend.disposeData(t.dataId);
    throw err;
  } finally {
    arena.free();
  }
}

/** Registers the decoding step on tfjs-wasm; needs wasm SIMD (every part of it runs on wasm-simd/). */
export function registerWasmDecodeStep(): void {
  if (tf.getKernel(DECODE_STEP_KERNEL, 'wasm')) return;
  tf.registerKernel({
    kernelName: DECODE_STEP_KERNEL,
    backendName: 'wasm',
    kernelFunc: ({ inputs, backend, attrs }) =>
      decodeStep(
        backend as unknown as TfjsWasmBackend,
        inputs as Record<string, Info>,
        attrs as unknown as DecodeStepAttrs,
      ),
  });
}
