/**
 * DECODE_STEP_KERNEL on tfjs-wasm (decode-step.ts has the contract): one decoding step of every layer
 * on wasm-simd/'s kernels, called by heap address. A step's numbers are a few hundred per row, so what
 * costs is not arithmetic but everything around it: as tfjs ops the step was ~170 kernels at ≈ 15 µs of
 * engine and allocation each, then as calls to the registered kernels ~100 tensors made and freed.
 * Here every temporary lives in one heap block taken per step, products read packed copies of the
 * weights (packed-weights.ts), attention runs per key/value head on the cache in place
 * (attention.ts), and the small elementwise work (bias, residual, LoRA's scaled add) is JS on a view.
 * Only the outputs are tensors: the logits and each layer's extended keys and values.
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
    this.base = backend.wasm._malloc(bytes);
    if (!this.base) throw new Error(`wasm decoding: the heap could not allocate ${bytes} bytes for a step`);
  }

  /** The address of `floats` fresh floats. */
  take(floats: number): number {
    const at = this.base + this.used;
    this.used += Math.ceil(floats / 4) * 16;
    if (this.used > this.bytes) throw new Error('wasm decoding: arena overrun (a size was left out of scratchSizes)');
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
  /** The tensors the step returns, as they are made (freed if it fails). */
  outputs: Info[];
  /** The model's sizes. */
  C: number;
  I: number;
  /** Scratch shared by every layer (each is written before it is read). */
  at: { x: number; h: number; q: number; k: number; v: number; heads: number; out: number; gate: number; up: number; loraMid: number; loraOut: number; bias: number; cos: number; sin: number };
}

/** Floats each of Step's scratch arrays needs, for a step with `keys` keys. */
function scratchSizes(attrs: DecodeStepAttrs, rows: number, keys: number, C: number, I: number): Record<keyof Step['at'], number> {
  const { numHeads: H, numKvHeads: Hkv, headDim: D } = attrs;
  const widest = Math.max(C, I, H * D);
  const stride = paddedKeys(keys);
  return {
    x: rows * C, h: rows * C, q: rows * H * D, k: rows * Hkv * D, v: rows * Hkv * D, heads: rows * H * D, out: rows * C,
    gate: rows * I, up: rows * I, loraMid: rows * attrs.loraRank, loraOut: rows * widest,
    bias: rows * Hkv * stride, cos: rows * D, sin: rows * D,
  }; // prettier-ignore
}

const address = (step: Step, t: Info) => step.backend.getMemoryOffset(t.dataId);

/** dst [rows, out] = src [rows, in] · W (+ bias) (+ scale·(src·A)·B) for the projection `module` of `layer`. */
function linear(step: Step, layer: number, module: string, src: number, dst: number): void {
  const { inputs, kernels, rows } = step;
  const parts = partsOf(module);
  const w = inputs[decodeInput(layer, parts.weight)];
  const bias = inputs[decodeInput(layer, parts.bias)];
  const loraA = inputs[decodeInput(layer, parts.loraA)];
  const loraB = inputs[decodeInput(layer, parts.loraB)];
  const [k, n] = w.shape;
  kernels.productPacked({ a: src, b: address(step, w), c: dst, m: rows, k, n }, step.packed.of(w));
  if (loraA && loraB) {
    const r = loraA.shape[1];
    kernels.product({ a: src, b: address(step, loraA), c: step.at.loraMid, m: rows, k, n: r, transposeA: false, transposeB: false });
    kernels.product({ a: step.at.loraMid, b: address(step, loraB), c: step.at.loraOut, m: rows, k: r, n, transposeA: false, transposeB: false });
  }
  if (bias) for (let row = 0; row < rows; row++) kernels.addScaled(dst + row * n * 4, address(step, bias), n, 1);
  if (loraA) kernels.addScaled(dst, step.at.loraOut, rows * n, step.attrs.loraScale); // float32 rounding, as tfjs's mul then add
}

/** x += y over n floats at those addresses. */
function addInPlace(step: Step, x: number, y: number, n: number): void {
  step.kernels.addScaled(x, y, n, 1);
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
    if (!(Number.isInteger(id) && id >= 0 && id < V)) throw new Error(`token id ${id} is outside the model's vocabulary of ${V}`);
    copyRow(step, heap, inputs.embed, id, C, at.x + b * C * 4);
    copyRow(step, heap, inputs.ropeCos, attrs.positions[b], D, at.cos + b * D * 4);
    copyRow(step, heap, inputs.ropeSin, attrs.positions[b], D, at.sin + b * D * 4);
  }
}

/** How far each cache buffer this kernel wrote is filled (keyed by its dataId, so an entry dies with the buffer). */
const filledTo = new WeakMap<object, number>();
/** Positions a cache grown by a step leaves free, so that the steps after append in place. */
const CACHE_HEADROOM = 64;

/**
 * The cache [rows, Hkv, capacity, D] (`past` positions filled) with this step's [rows, Hkv, D] (at
 * `fresh`) at position `past`: in place, the output sharing the input's buffer, when the capacity has
 * room and nothing was written there yet (a second step from the same cache, a fork, must not
 * overwrite the first's); otherwise copied into a new buffer with CACHE_HEADROOM positions to spare.
 */
function appendToCache(step: Step, cache: Info, fresh: number): Info {
  const { backend, attrs } = step;
  const [rows, Hkv, capacity, D] = cache.shape;
  const past = attrs.past;
  const inPlace = past < capacity && (filledTo.get(cache.dataId) ?? past) === past;
  const out = inPlace ? { dataId: cache.dataId, shape: cache.shape, dtype: 'float32' as const } : backend.makeOutput([rows, Hkv, past + 1 + CACHE_HEADROOM, D], 'float32');
  if (inPlace) backend.incRef(cache.dataId);
  step.outputs.push(out);
  const grown = out.shape[2];
  const heap = step.kernels.floats();
  const [from, to] = [address(step, cache) / 4, address(step, out) / 4];
  for (let head = 0; head < rows * Hkv; head++) {
    if (!inPlace) heap.copyWithin(to + head * grown * D, from + head * capacity * D, from + (head * capacity + past) * D);
    heap.copyWithin(to + (head * grown + past) * D, fresh / 4 + head * D, fresh / 4 + (head + 1) * D);
  }
  filledTo.set(out.dataId, past + 1);
  return out;
}

/**
 * softmax(q·kᵀ/√D + mask)·v for one position into step.at.heads [rows, H·D], from q [rows, H, D] and the
 * extended keys and values [rows, Hkv, capacity, D] (past + 1 filled): the query heads sharing a key/value
 * head go together, one group per row and key/value head, each with its row's mask (copied per group, so
 * every operand of group g lies a fixed step after group g - 1's and the groups can be shared between threads).
 */
function attend(step: Step, keys: Info, values: Info): void {
  const { attrs, rows, kernels, at } = step;
  const { numHeads: H, numKvHeads: Hkv, headDim: D } = attrs;
  const rep = H / Hkv;
  const Tk = attrs.past + 1;
  const capacity = keys.shape[2];
  const stride = paddedKeys(Tk);
  const bias = kernels.floats().subarray(at.bias / 4, at.bias / 4 + rows * Hkv * stride).fill(0);
  if (attrs.keyValid) {
    for (let group = 0; group < rows * Hkv; group++) {
      const valid = attrs.keyValid[Math.floor(group / Hkv)];
      for (let j = 0; j < Tk; j++) if (!valid[j]) bias[group * stride + j] = ATTENTION_MASKED;
    }
  }
  const [kAt, vAt] = [address(step, keys), address(step, values)];
  const headsBytes = rep * D * 4;
  const cacheBytes = capacity * D * 4;
  kernels.attendGroups(
    { q: at.q, k: kAt, v: vAt, bias: at.bias, out: at.heads },
    { q: headsBytes, k: cacheBytes, v: cacheBytes, bias: stride * 4, out: headsBytes },
    rows * Hkv, rep, Tk, D, 1 / Math.sqrt(D),
  );
}

/** One layer on the residual stream step.at.x (updated in place); returns its extended keys and values. */
function decodeLayer(step: Step, i: number): { keys: Info; values: Info } {
  const { kernels, inputs, attrs, rows, C, I, at } = step;
  const { numHeads: H, numKvHeads: Hkv, headDim: D } = attrs;
  norm(step, at.x, inputs[decodeInput(i, 'inputNorm')], at.h, rows, C);
  linear(step, i, 'q_proj', at.h, at.q);
  linear(step, i, 'k_proj', at.h, at.k);
  linear(step, i, 'v_proj', at.h, at.v);
  const [qNorm, kNorm] = [inputs[decodeInput(i, 'qNorm')], inputs[decodeInput(i, 'kNorm')]];
  if (qNorm) norm(step, at.q, qNorm, at.q, rows * H, D);
  if (kNorm) norm(step, at.k, kNorm, at.k, rows * Hkv, D);
  rotate(step, at.q, H);
  rotate(step, at.k, Hkv);
  const keys = appendToCache(step, inputs[decodeInput(i, 'cacheK')], at.k);
  const values = appendToCache(step, inputs[decodeInput(i, 'cacheV')], at.v);
  attend(step, keys, values);
  linear(step, i, 'o_proj', at.heads, at.out);
  addInPlace(step, at.x, at.out, rows * C);

  norm(step, at.x, inputs[decodeInput(i, 'postNorm')], at.h, rows, C);
  linear(step, i, 'gate_proj', at.h, at.gate);
  linear(step, i, 'up_proj', at.h, at.up);
  kernels.swiglu(at.gate, at.up, at.gate, rows * I);
  linear(step, i, 'down_proj', at.gate, at.out);
  addInPlace(step, at.x, at.out, rows * C);
  return { keys, values };
}

/** RMSNorm of `count` rows of `width` floats (in place allowed: a row is read whole before it is written). */
function norm(step: Step, x: number, weight: Info, out: number, count: number, width: number): void {
  step.kernels.rmsNorm(x, address(step, weight), out, count, width, step.attrs.eps);
}

/** RoPE on `n` heads per row, in place (the kernel loads both halves of a head before it stores either). */
function rotate(step: Step, heads: number, n: number): void {
  step.kernels.rope(heads, step.at.cos, step.at.sin, heads, { rows: step.rows * n, D: step.attrs.headDim, T: 1, H: n }, true, false);
}

/** The step's outputs; any made before a failure are freed. */
function decodeStep(backend: TfjsWasmBackend, inputs: Record<string, Info>, attrs: DecodeStepAttrs): Info[] {
  const kernels = heapKernelsOf(backend.wasm);
  const rows = inputs.ids.shape[0];
  const [C, I] = [inputs.embed.shape[1], inputs[decodeInput(0, partsOf('gate_proj').weight)].shape[1]];
  const sizes = scratchSizes(attrs, rows, attrs.past + 1, C, I);
  const arena = new Arena(backend, Object.values(sizes).reduce((sum, n) => sum + Math.ceil(n / 4) * 16, 0));
  const outputs: Info[] = [];
  try {
    const at = Object.fromEntries(Object.entries(sizes).map(([name, floats]) => [name, arena.take(floats)])) as Step['at'];
    const step: Step = { backend, kernels, packed: packedWeightsOf(backend, kernels), inputs, attrs, rows, outputs, C, I, at };
    stepInputs(step);
    const caches = Array.from({ length: attrs.numLayers }, (_, i) => decodeLayer(step, i));
    kernels.rmsNorm(at.x, address(step, inputs.norm), at.h, rows, C, attrs.eps);
    const head = inputs.head;
    const logits = backend.makeOutput([rows, 1, head.shape[1]], 'float32');
    outputs.push(logits);
    kernels.productPacked({ a: at.h, b: address(step, head), c: address(step, logits), m: rows, k: C, n: head.shape[1] }, step.packed.of(head));
    return [logits, ...caches.map((c) => c.keys), ...caches.map((c) => c.values)];
  } catch (err) {
    for (const t of outputs) backend.disposeData(t.dataId);
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
    kernelFunc: ({ inputs, backend, attrs }) => decodeStep(backend as unknown as TfjsWasmBackend, inputs as Record<string, Info>, attrs as unknown as DecodeStepAttrs),
  });
}
