/**
 * gemm-module.ts's kernel instantiated over tfjs-wasm's own heap: it imports the backend's
 * WebAssembly.Memory, so it reads its operands and writes its result where tfjs keeps tensors, with no
 * copy in or out. Its scratch (the packed operands) is allocated with the backend's malloc.
 *
 * Measured on a 2-vCPU EPYC (bench/model.bench.ts): about twice XNNPACK's single-thread speed on a
 * small transformer's products, and transposed operands at the same speed (XNNPACK as tfjs-wasm calls it
 * needs them transposed first). With more than one tfjs-wasm thread, XNNPACK's threaded products are
 * kept instead (wasm-matmul.ts decides).
 */
import { GEMM_EXPORT, gemmModuleBytes, gemmScratchFloats } from './gemm-module.ts';

/** What this needs of tfjs-wasm's emscripten module (BackendWasm's `wasm`). */
export interface EmscriptenHeap {
  /** The non-threaded build exports its memory. */
  asm?: { memory?: WebAssembly.Memory };
  /** The threaded build creates the (shared) memory itself and keeps it here. */
  wasmMemory?: WebAssembly.Memory;
  _malloc(bytes: number): number;
  _free(pointer: number): void;
}

type GemmFunction = (a: number, b: number, c: number, scratch: number, m: number, k: number, n: number, aRow: number, aCol: number, bRow: number, bCol: number) => void;

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

/** Calls made at start-up so V8 has the kernel optimised before real work: a wasm call that has started in the baseline tier finishes there. */
const WARM_UP_CALLS = 64;

export class HeapGemm {
  private readonly gemm: GemmFunction;
  private readonly heap: EmscriptenHeap;
  private scratch = 0;
  private scratchFloats = 0;
  /** Whether products multiply-add with relaxed SIMD (when the engine has it). */
  readonly relaxedSimd: boolean;

  /** `relaxedSimd`: force the plain kernel (false) or require the multiply-add one (true); default: whichever the engine has. */
  constructor(heap: EmscriptenHeap, options: { relaxedSimd?: boolean } = {}) {
    const memory = heap.asm?.memory ?? heap.wasmMemory;
    if (!memory) throw new Error('tfjs-wasm exposes no WebAssembly.Memory (neither asm.memory nor wasmMemory)');
    const shared = typeof SharedArrayBuffer !== 'undefined' && memory.buffer instanceof SharedArrayBuffer;
    const available = relaxedSimdAvailable();
    if (options.relaxedSimd && !available) throw new Error('wasm gemm: this engine has no relaxed SIMD');
    this.relaxedSimd = options.relaxedSimd ?? available;
    const bytes = gemmModuleBytes({ sharedMemory: shared, relaxedSimd: this.relaxedSimd });
    const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes as BufferSource), { env: { memory } });
    this.gemm = instance.exports[GEMM_EXPORT] as GemmFunction;
    this.heap = heap;
    this.warmUp();
  }

  /** C = A'·B'. k ≥ 1 (a product over nothing is the caller's zeros). */
  product(p: HeapProduct): void {
    const scratch = this.scratchFor(gemmScratchFloats(p.m, p.k));
    const [aRow, aCol] = p.transposeA ? [4, p.m * 4] : [p.k * 4, 4];
    const [bRow, bCol] = p.transposeB ? [4, p.k * 4] : [p.n * 4, 4];
    this.gemm(p.a, p.b, p.c, scratch, p.m, p.k, p.n, aRow, aCol, bRow, bCol);
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

  dispose(): void {
    if (this.scratch) this.heap._free(this.scratch);
    this.scratch = 0;
    this.scratchFloats = 0;
  }
}

/** Whether this engine validates relaxed SIMD (Chrome ≥ 114; Node 20 only with --experimental-wasm-relaxed-simd). */
export function relaxedSimdAvailable(): boolean {
  try {
    return WebAssembly.validate(gemmModuleBytes({ sharedMemory: false, relaxedSimd: true }) as BufferSource);
  } catch {
    return false;
  }
}
