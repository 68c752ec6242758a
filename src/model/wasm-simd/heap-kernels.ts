/**
 * The kernels of this folder (gemm.ts, attention.ts, rms-norm.ts, rope.ts, swiglu.ts, adam.ts) in one WebAssembly module instantiated
 * over tfjs-wasm's own heap: it imports the backend's WebAssembly.Memory, so it reads its operands and
 * writes its results where tfjs keeps tensors, with no copy in or out. The matrix product's scratch
 * (its packed operands) is allocated with the backend's malloc. Addresses are byte offsets on the heap.
 */
import type { AdamHyper } from '../fused.ts';
import { assembleModule } from './assembler.ts';
import { adamFunction } from './adam.ts';
import { attentionFunctions } from './attention.ts';
import { gemmFunctions, gemmScratchFloats } from './gemm.ts';
import { rmsNormFunctions } from './rms-norm.ts';
import { ropeFunction } from './rope.ts';
import { swigluFunction } from './swiglu.ts';

/** What this needs of tfjs-wasm's emscripten module (BackendWasm's `wasm`). */
export interface EmscriptenHeap {
  /** The non-threaded build exports its memory. */
  asm?: { memory?: WebAssembly.Memory };
  /** The threaded build creates the (shared) memory itself and keeps it here. */
  wasmMemory?: WebAssembly.Memory;
  _malloc(bytes: number): number;
  _free(pointer: number): void;
}

/** The parts of tfjs-wasm's backend (BackendWasm) that Spindle's wasm kernels use. */
export interface TfjsWasmBackend {
  wasm: EmscriptenHeap & { tfjs: { getThreadsCount(): number } };
  makeOutput(shape: number[], dtype: 'float32'): { dataId: object; shape: number[]; dtype: 'float32' };
  /** A tensor's byte offset on the heap. */
  getMemoryOffset(dataId: object): number;
  /** A view of a tensor's data on the heap (taken after any allocation: growing the heap detaches views). */
  typedArrayFromHeap(t: { dataId: object; shape: number[]; dtype: string }): Float32Array;
  /** Adds a reference to a buffer (an output sharing an input's buffer). */
  incRef(dataId: object): void;
  /** Drops one reference; true when the buffer was freed. */
  disposeData(dataId: object, force?: boolean): boolean;
}

/** One product's operands: byte addresses on the heap, sizes, and which operands are stored transposed. */
export interface HeapProduct {
  /** A'[m, k]: a [m, k] row-major, or [k, m] with transposeA. */
  a: number;
  /** B'[k, n]: b [k, n] row-major, or [n, k] with transposeB. */
  b: number;
  /** C[m, n], row-major. */
  c: number;
  m: number;
  k: number;
  n: number;
  transposeA: boolean;
  transposeB: boolean;
}

interface Exports {
  gemm(a: number, b: number, c: number, scratch: number, m: number, k: number, n: number, aRow: number, aCol: number, bRow: number, bCol: number): void;
  gemmPacked(a: number, b: number, c: number, scratch: number, m: number, k: number, n: number, aRow: number, aCol: number, bRow: number, bCol: number, packed: number): void;
  packStrips(b: number, packed: number, k: number, n: number): void;
  attendScores(q: number, k: number, s: number, rows: number, keys: number, D: number, stride: number): void;
  softmaxRows(s: number, bias: number, rows: number, stride: number, scale: number): void;
  attendValues(p: number, v: number, out: number, rows: number, keys: number, D: number, stride: number): void;
  swiglu(gate: number, up: number, out: number, n: number): void;
  rmsNorm(x: number, w: number, out: number, rows: number, cols: number, eps: number): void;
  rmsNormFactor(x: number, out: number, rows: number, cols: number, eps: number): void;
  rmsNormDx(dy: number, x: number, w: number, out: number, rows: number, cols: number, eps: number): void;
  rope(x: number, cos: number, sin: number, out: number, rows: number, D: number, T: number, H: number, perRow: number, sign: number): void;
  adam(p: number, g: number, m: number, v: number, out: number, n: number, part: number, ...scalars: number[]): void;
}

/** The module's bytes: `sharedMemory` for a threaded build's heap, `relaxedSimd` for the multiply-add gemm. */
export function simdModuleBytes(options: { sharedMemory: boolean; relaxedSimd: boolean }): Uint8Array {
  return assembleModule([...gemmFunctions(options.relaxedSimd), ...attentionFunctions(), ...rmsNormFunctions(), ropeFunction(), swigluFunction(), adamFunction()], options.sharedMemory);
}

/** Calls made at start-up so V8 has the gemm optimised before real work: a wasm call that has started in the baseline tier finishes there. */
const WARM_UP_CALLS = 64;

export class HeapKernels {
  private readonly exports: Exports;
  private readonly heap: EmscriptenHeap;
  private readonly memory: WebAssembly.Memory;
  private scratch = 0;
  private scratchFloats = 0;
  /** Whether products multiply-add with relaxed SIMD (when the engine has it). */
  readonly relaxedSimd: boolean;

  /** `relaxedSimd`: force the plain gemm (false) or require the multiply-add one (true); default: whichever the engine has. */
  constructor(heap: EmscriptenHeap, options: { relaxedSimd?: boolean } = {}) {
    const memory = heap.asm?.memory ?? heap.wasmMemory;
    if (!memory) throw new Error('tfjs-wasm exposes no WebAssembly.Memory (neither asm.memory nor wasmMemory)');
    const shared = typeof SharedArrayBuffer !== 'undefined' && memory.buffer instanceof SharedArrayBuffer;
    const available = relaxedSimdAvailable();
    if (options.relaxedSimd && !available) throw new Error('wasm kernels: this engine has no relaxed SIMD');
    this.relaxedSimd = options.relaxedSimd ?? available;
    const bytes = simdModuleBytes({ sharedMemory: shared, relaxedSimd: this.relaxedSimd });
    this.exports = new WebAssembly.Instance(new WebAssembly.Module(bytes as BufferSource), { env: { memory } }).exports as unknown as Exports;
    this.heap = heap;
    this.memory = memory;
    this.warmUp();
  }

  /** C = A'·B'. k ≥ 1 (a product over nothing is the caller's zeros). */
  product(p: HeapProduct): void {
    const scratch = this.scratchFor(gemmScratchFloats(p.m, p.k));
    const [aRow, aCol] = p.transposeA ? [4, p.m * 4] : [p.k * 4, 4];
    const [bRow, bCol] = p.transposeB ? [4, p.k * 4] : [p.n * 4, 4];
    this.exports.gemm(p.a, p.b, p.c, scratch, p.m, p.k, p.n, aRow, aCol, bRow, bCol);
  }

  /** C[m, n] = A[m, k] · B[k, n] (both row-major) with B's whole strips read from `packed`, packStrips' copy of it. k ≥ 1. */
  productPacked(p: { a: number; b: number; c: number; m: number; k: number; n: number }, packed: number): void {
    const scratch = this.scratchFor(gemmScratchFloats(p.m, p.k));
    this.exports.gemmPacked(p.a, p.b, p.c, scratch, p.m, p.k, p.n, p.k * 4, 4, p.n * 4, 4, packed);
  }

  /** Writes b [k, n]'s whole strips of 8 columns to `packed` (packedStripsFloats(k, n) floats) for productPacked. */
  packStrips(b: number, packed: number, k: number, n: number): void {
    this.exports.packStrips(b, packed, k, n);
  }

  /** A view of the whole heap as floats, current (growing the heap detaches older views). */
  floats(): Float32Array {
    return new Float32Array(this.memory.buffer);
  }

  /**
   * One query position's attention for the `rows` query heads sharing a key/value head (attention.ts):
   * scores [rows, paddedKeys(keys)] ← q·kᵀ, softmax(scores·scale + bias), out [rows, D] ← scores·v.
   * D must be a multiple of 4.
   */
  attendOne(a: { q: number; k: number; v: number; scores: number; bias: number; out: number }, rows: number, keys: number, D: number, scale: number): void {
    const stride = paddedKeys(keys);
    this.exports.attendScores(a.q, a.k, a.scores, rows, keys, D, stride);
    this.exports.softmaxRows(a.scores, a.bias, rows, stride, scale);
    this.exports.attendValues(a.scores, a.v, a.out, rows, keys, D, stride);
  }

  /** out = gate·sigmoid(gate)·up over n floats, n a multiple of 4 (swiglu.ts). */
  swiglu(gate: number, up: number, out: number, n: number): void {
    this.exports.swiglu(gate, up, out, n);
  }

  /** RMSNorm over rows of `cols` floats, cols a multiple of 4 (rms-norm.ts). */
  rmsNorm(x: number, w: number, out: number, rows: number, cols: number, eps: number): void {
    this.exports.rmsNorm(x, w, out, rows, cols, eps);
  }
  rmsNormFactor(x: number, out: number, rows: number, cols: number, eps: number): void {
    this.exports.rmsNormFactor(x, out, rows, cols, eps);
  }
  rmsNormDx(dy: number, x: number, w: number, out: number, rows: number, cols: number, eps: number): void {
    this.exports.rmsNormDx(dy, x, w, out, rows, cols, eps);
  }

  /** RoPE over x [B, H, T, D] with tables [T, D], or [B, 1, T, D] when `perRow`; D/2 a multiple of 4 (rope.ts). */
  rope(x: number, cos: number, sin: number, out: number, shape: { rows: number; D: number; T: number; H: number }, perRow: boolean, inverse: boolean): void {
    this.exports.rope(x, cos, sin, out, shape.rows, shape.D, shape.T, shape.H, perRow ? 1 : 0, inverse ? -1 : 1);
  }

  /** Writes Adam's new m (part 0), v (1) or p (2) of n floats to `out` (adam.ts). */
  adam(arrays: { p: number; g: number; m: number; v: number; out: number }, n: number, part: 0 | 1 | 2, h: AdamHyper): void {
    const { p, g, m, v, out } = arrays;
    const decays = h.wd > 0;
    const l2 = h.kind === 'adam' && decays ? h.wd : 0; // Adam's L2 penalty, added to the gradient
    const decay = h.kind === 'adamw' && decays ? 1 - h.lr * h.wd : 1; // AdamW's decoupled decay
    this.exports.adam(p, g, m, v, out, n, part, h.lr, h.b1, 1 - h.b1, h.b2, 1 - h.b2, h.eps, h.bc1, h.bc2, l2, decay, h.gradScale);
  }

  /** Scratch for the packed operands, grown (never shrunk) to the largest product seen. */
  private scratchFor(floats: number): number {
    if (floats > this.scratchFloats) {
      if (this.scratch) this.heap._free(this.scratch);
      this.scratchFloats = 0;
      this.scratch = this.heap._malloc(floats * 4);
      if (!this.scratch) throw new Error(`wasm gemm: the heap could not allocate ${floats * 4} bytes of scratch`);
      this.scratchFloats = floats;
    }
    return this.scratch;
  }

  private warmUp(): void {
    const size = 16;
    const bytes = size * size * 4;
    const scratch = this.heap._malloc(3 * bytes);
    if (!scratch) return; // warm-up only saves time; a full heap shows up on the first real product
    for (let i = 0; i < WARM_UP_CALLS; i++) {
      this.product({ a: scratch, b: scratch + bytes, c: scratch + 2 * bytes, m: size, k: size, n: size, transposeA: i % 2 === 1, transposeB: i % 4 >= 2 });
    }
    this.heap._free(scratch);
  }
}

/** A score row's floats for `keys` keys: whole vectors (attention.ts). */
export function paddedKeys(keys: number): number {
  return Math.ceil(keys / 4) * 4;
}

let simdSupported: boolean | undefined;

/** Whether this engine has WebAssembly SIMD at all (every current browser; without it the kernels are not registered and tfjs's own run). Checked once. */
export function simdKernelsSupported(): boolean {
  if (simdSupported === undefined) {
    try {
      simdSupported = WebAssembly.validate(simdModuleBytes({ sharedMemory: false, relaxedSimd: false }) as BufferSource);
    } catch {
      simdSupported = false;
    }
  }
  return simdSupported;
}

/** Whether this engine validates relaxed SIMD (Chrome ≥ 114; Node 20 only with --experimental-wasm-relaxed-simd). */
export function relaxedSimdAvailable(): boolean {
  try {
    return WebAssembly.validate(simdModuleBytes({ sharedMemory: false, relaxedSimd: true }) as BufferSource);
  } catch {
    return false;
  }
}

const instances = new WeakMap<EmscriptenHeap, HeapKernels>();

/** The kernels over this tfjs-wasm module's heap, made on first use. */
export function heapKernelsOf(heap: EmscriptenHeap): HeapKernels {
  let kernels = instances.get(heap);
  if (!kernels) {
    kernels = new HeapKernels(heap);
    instances.set(heap, kernels);
  }
  return kernels;
}
