/**
 * The kernels of this folder (gemm.ts, attention.ts, rms-norm.ts, rope.ts, swiglu.ts, add-scaled.ts, adam.ts, sum-squares.ts) in one WebAssembly module instantiated
 * over tfjs-wasm's own heap: it imports the backend's WebAssembly.Memory, so it reads its operands and
 * writes its results where tfjs keeps tensors, with no copy in or out. The matrix product's scratch
 * (its packed operands) is allocated with the backend's malloc. Addresses are byte offsets on the heap.
 *
 * When the heap is shared (a threaded tfjs-wasm build, or shared-heap.ts in Node) and this thread may
 * block, products are split between this thread and up to setKernelThreads(n) - 1 workers running the
 * same module over the same heap (kernel-threads.ts, split by work-split.ts), with the same bits as one
 * thread gives. inPhases goes further: it records a whole piece of work (a decoding step) as one program
 * whose phases the threads share, so that they meet between phases instead of being handed each kernel.
 */
import type { AdamHyper } from '../fused.ts';
import { assembleModule } from './assembler.ts';
import { adamFunction } from './adam.ts';
import { sumSquaresFunction } from './sum-squares.ts';
import { attentionFunctions } from './attention.ts';
import { gemmFunctions, gemmScratchFloats } from './gemm.ts';
import {
  band,
  MIN_SHARE_WORK,
  partsFor,
  splitBatch,
  splitElements,
  splitProduct,
  type GemmArgs,
} from './work-split.ts';
import {
  canBlock,
  encodeShare,
  KernelThreads,
  programLayout,
  programLength,
  type KernelShare,
} from './kernel-threads.ts';
import { rmsNormFunctions } from './rms-norm.ts';
import { ropeFunction } from './rope.ts';
import { swigluFunction, swigluGradGateFunction, swigluGradUpFunction } from './swiglu.ts';
import { addScaledFunction } from './add-scaled.ts';
import { copyRowsFunction } from './copy-rows.ts';

/** What this needs of tfjs-wasm's emscripten module (BackendWasm's `wasm`). */
export interface EmscriptenHeap {
  /** The non-threaded build exports its memory. */
  asm?: { memory?: WebAssembly.Memory };
  /** The threaded build creates the (shared) memory itself and keeps it here. */
  wasmMemory?: WebAssembly.Memory;
  /**
   * An address as a signed i32: every caller takes `>>> 0`, or a heap past 2 GiB (a GRPO update on
   * 2,048-token episodes reaches it) gives negative offsets that no typed-array view accepts.
   */
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
  gemm(
    a: number,
    b: number,
    c: number,
    scratch: number,
    m: number,
    k: number,
    n: number,
    aRow: number,
    aCol: number,
    bRow: number,
    bCol: number,
    cRow: number,
  ): void;
  gemmPacked(
    a: number,
    b: number,
    c: number,
    scratch: number,
    m: number,
    k: number,
    n: number,
    aRow: number,
    aCol: number,
    bRow: number,
    bCol: number,
    cRow: number,
    packed: number,
  ): void;
  packStrips(b: number, packed: number, k: number, n: number): void;
  attendScores(q: number, k: number, s: number, rows: number, keys: number, D: number, stride: number): void;
  softmaxRows(
    s: number,
    bias: number,
    rows: number,
    stride: number,
    scale: number,
    first: number,
    period: number,
    rowBytes: number,
    groupRows: number,
    groupBytes: number,
  ): void;
  attendValues(p: number, v: number, out: number, rows: number, keys: number, D: number, stride: number): void;
  softmaxGradRows(dy: number, y: number, out: number, rows: number, stride: number, scale: number): void;
  swiglu(gate: number, up: number, out: number, n: number): void;
  swigluGradUp(gate: number, dy: number, out: number, n: number): void;
  swigluGradGate(gate: number, up: number, dy: number, out: number, n: number): void;
  addScaled(y: number, x: number, n: number, scale: number): void;
  copyRows(dst: number, src: number, rows: number, n: number, dstRow: number, srcRow: number): void;
  rmsNorm(x: number, w: number, out: number, rows: number, cols: number, eps: number): void;
  rmsNormFactor(x: number, out: number, rows: number, cols: number, eps: number): void;
  rmsNormDx(dy: number, x: number, w: number, out: number, rows: number, cols: number, eps: number): void;
  rmsNormDw(dy: number, x: number, out: number, rows: number, cols: number, eps: number): void;
  rope(
    x: number,
    cos: number,
    sin: number,
    out: number,
    rows: number,
    D: number,
    T: number,
    H: number,
    perRow: number,
    sign: number,
  ): void;
  adam(
    p: number,
    g: number,
    m: number,
    v: number,
    outP: number,
    outM: number,
    outV: number,
    n: number,
    ...scalars: number[]
  ): void;
  sumSquares(x: number, n: number, out: number): void;
}

/** The module's bytes: `sharedMemory` for a threaded build's heap, `relaxedSimd` for the multiply-add gemm. */
export function simdModuleBytes(options: { sharedMemory: boolean; relaxedSimd: boolean }): Uint8Array {
  return assembleModule(
    [
      ...gemmFunctions(options.relaxedSimd),
      ...attentionFunctions(),
      ...rmsNormFunctions(),
      ropeFunction(),
      swigluFunction(),
      swigluGradUpFunction(),
      swigluGradGateFunction(),
      addScaledFunction(),
      copyRowsFunction(),
      adamFunction(),
      sumSquaresFunction(),
    ],
    options.sharedMemory,
  );
}

/** Calls made at start-up so V8 has the gemm optimised before real work: a wasm call that has started in the baseline tier finishes there. */
const WARM_UP_CALLS = 64;

/** An Adam element's cost in gemm multiply-adds (work-split.ts's unit), roughly: a dozen float operations and a square root. */
const ADAM_WORK = 16;
/** Multiply-adds an exp-based elementwise kernel (SwiGLU's) is worth per element. */
const ELEMENTWISE_WORK = 16;
/** softmaxRows' mask fields (attention.ts) for rows that all read one bias row: first, period, rowBytes, groupRows, groupBytes. */
const ONE_BIAS_ROW = [0, 1, 0, 1, 0];
/** Multiply-adds a softmax is worth per score (an exp's polynomial, the max, sum and scaling passes). */
const SOFTMAX_WORK = 16;
/** Multiply-adds a softmax's gradient is worth per score (two passes over three rows). */
const SOFTMAX_GRAD_WORK = 4;

/** MIN_SHARE_WORK while inPhases records: a share of about a microsecond, about what waiting between phases costs. */
const PHASED_SHARE_WORK = 1 << 14;

let threadSetting = 1;

/** Threads the kernels may use, this one included (1: only the calling thread); read at every kernel call. */
export function setKernelThreads(count: number): void {
  if (!Number.isInteger(count) || count < 1) throw new Error(`kernel threads must be a whole number ≥ 1; got ${count}`);
  threadSetting = count;
}

export function kernelThreadSetting(): number {
  return threadSetting;
}

/** One thread's scratch for the packed operands, grown (never shrunk) to the largest product it ran. */
interface Scratch {
  at: number;
  floats: number;
}

export class HeapKernels {
  private readonly exports: Exports;
  private readonly heap: EmscriptenHeap;
  private readonly memory: WebAssembly.Memory;
  /** Index 0 is this thread's; i is the ith share's of a split product. */
  private readonly scratch: Scratch[] = [];
  /** Workers over the same heap; null when it is not shared or this thread may not block. */
  private pool: KernelThreads | null = null;
  private readonly threadOption: number | undefined;
  /** Why the workers could not start, if they could not (the kernels then stay on one thread). */
  threadsFailure: string | null = null;
  /** Whether products multiply-add with relaxed SIMD (when the engine has it). */
  readonly relaxedSimd: boolean;
  /** The exports' names; a recorded call names its export by index here. */
  private readonly names: readonly string[];
  private readonly indexOfExport: (name: string) => number;
  /** The exports in that order. */
  private readonly fns: ((...args: number[]) => void)[];
  /** While inPhases records: the program's phases, each its shares, each its calls (export index, argument count, arguments). */
  private phases: number[][][] | null = null;
  /** The threads inPhases records for. */
  private phaseThreads = 1;
  /** The phase together() is filling, while it runs. */
  private sharedPhase: number[][] | null = null;
  /** Scratch replaced while inPhases records, freed once the recorded calls that use it have run. */
  private freeAfterRun: number[] = [];
  /** Runs inPhases has split between threads (tests check that a split really happened). */
  phasedRuns = 0;

  /**
   * `relaxedSimd`: force the plain gemm (false) or require the multiply-add one (true); default: whichever the engine has.
   * `threads`: this instance's thread count instead of setKernelThreads'.
   */
  constructor(heap: EmscriptenHeap, options: { relaxedSimd?: boolean; threads?: number } = {}) {
    const memory = heap.asm?.memory ?? heap.wasmMemory;
    if (!memory) throw new Error('tfjs-wasm exposes no WebAssembly.Memory (neither asm.memory nor wasmMemory)');
    const shared = typeof SharedArrayBuffer !== 'undefined' && memory.buffer instanceof SharedArrayBuffer;
    const available = relaxedSimdAvailable();
    if (options.relaxedSimd && !available) throw new Error('wasm kernels: this engine has no relaxed SIMD');
    this.relaxedSimd = options.relaxedSimd ?? available;
    const bytes = simdModuleBytes({ sharedMemory: shared, relaxedSimd: this.relaxedSimd });
    const module = new WebAssembly.Module(bytes as BufferSource);
    this.exports = new WebAssembly.Instance(module, { env: { memory } }).exports as unknown as Exports;
    this.names = Object.keys(this.exports);
    const indices = new Map(this.names.map((name, i) => [name, i]));
    this.indexOfExport = (name) => indices.get(name)!;
    this.fns = this.names.map((name) => this.exports[name as keyof Exports] as (...args: number[]) => void);
    this.heap = heap;
    this.memory = memory;
    this.threadOption = options.threads;
    if (shared && canBlock()) {
      try {
        this.pool = new KernelThreads(memory, module, this.names);
      } catch (error) {
        this.threadsFailure = error instanceof Error ? error.message : String(error);
      }
    }
    this.warmUp();
  }

  /** C = A'·B'. k ≥ 1 (a product over nothing is the caller's zeros). */
  product(p: HeapProduct): void {
    this.products(p, 1, [0, 0, 0]);
  }

  /** `count` products of the same sizes, slice s's operands and result `strides` ([a, b, c] bytes) after slice 0's. */
  products(p: HeapProduct, count: number, strides: [number, number, number]): void {
    const [aRow, aCol] = p.transposeA ? [4, p.m * 4] : [p.k * 4, 4];
    const [bRow, bCol] = p.transposeB ? [4, p.k * 4] : [p.n * 4, 4];
    const g: GemmArgs = { a: p.a, b: p.b, c: p.c, m: p.m, k: p.k, n: p.n, aRow, aCol, bRow, bCol, cRow: p.n * 4 };
    if (count === 1 && partsFor(p.m * p.k * p.n, this.threads(), this.shareWork()) === 1) {
      this.call('gemm', gemmCallArgs(g, this.scratchFor(0, gemmScratchFloats(g.m, g.k)))); // the usual case, without the share objects
      return;
    }
    const runs = splitBatch(count, p.m * p.k * p.n, this.threads(), this.shareWork());
    if (runs.length > 1) {
      const at = (s: number): GemmArgs =>
        band(g, { a: g.a + s * strides[0], b: g.b + s * strides[1], c: g.c + s * strides[2] });
      this.gemmShares(
        'gemm',
        runs.map(([s0]) => at(s0)),
        (i) => ({ count: runs[i][1] - runs[i][0], strides }),
      );
      return;
    }
    for (let s = 0; s < count; s++)
      this.gemmShares(
        'gemm',
        splitProduct(
          band(g, { a: g.a + s * strides[0], b: g.b + s * strides[1], c: g.c + s * strides[2] }),
          this.threads(),
          this.shareWork(),
        ),
      );
  }

  /** C[m, n] = A[m, k] · B[k, n] (both row-major) with B's whole strips read from `packed`, packStrips' copy of it. k ≥ 1. */
  productPacked(p: { a: number; b: number; c: number; m: number; k: number; n: number }, packed: number): void {
    if (partsFor(p.m * p.k * p.n, this.threads(), this.shareWork()) === 1) {
      const scratch = this.scratchFor(0, gemmScratchFloats(p.m, p.k)); // the usual case, without the share objects
      this.call('gemmPacked', [p.a, p.b, p.c, scratch, p.m, p.k, p.n, p.k * 4, 4, p.n * 4, 4, p.n * 4, packed]);
      return;
    }
    const g: GemmArgs = {
      a: p.a,
      b: p.b,
      c: p.c,
      m: p.m,
      k: p.k,
      n: p.n,
      aRow: p.k * 4,
      aCol: 4,
      bRow: p.n * 4,
      bCol: 4,
      cRow: p.n * 4,
      packed,
    };
    this.gemmShares('gemmPacked', splitProduct(g, this.threads(), this.shareWork()));
  }

  /** Threads usable now: the setting, less workers not started yet (asked for here, used once ready). */
  threads(): number {
    const wanted = this.threadOption ?? threadSetting;
    if (this.phases) return this.phaseThreads;
    if (!this.pool || wanted <= 1) return 1;
    if (this.pool.started < wanted - 1) void this.startWorkers(wanted - 1);
    return Math.min(wanted, 1 + (this.pool?.ready ?? 0));
  }

  /** Resolves when the workers the setting asks for are ready (tests and benchmarks; kernels never wait). */
  async threadsReady(): Promise<number> {
    const wanted = this.threadOption ?? threadSetting;
    if (this.pool && wanted > 1) await this.startWorkers(wanted - 1);
    await this.pool?.whenReady();
    return this.threads();
  }

  private startWorkers(count: number): Promise<void> {
    return this.pool!.grow(this.heap, count).catch((error: unknown) => {
      this.threadsFailure = error instanceof Error ? error.message : String(error);
      this.pool = null;
    });
  }

  /** Runs one gemm call per share, share 0 on this thread, each with its own scratch; `repeat` gives share i's slices and their strides. */
  private gemmShares(
    fn: 'gemm' | 'gemmPacked',
    shares: GemmArgs[],
    repeat: (i: number) => { count: number; strides: number[] } = () => ({ count: 1, strides: [] }),
  ): void {
    this.runShares(
      shares.map((g, i) => {
        const { count, strides } = repeat(i);
        return {
          calls: [{ fn, args: gemmCallArgs(g, this.scratchFor(i, gemmScratchFloats(g.m, g.k))), strides }],
          count,
        };
      }),
    );
  }

  /**
   * Runs `body`, ordinary calls of these kernels, on up to `threads` threads: it is recorded first as a
   * program of phases (kernel-threads.ts), each kernel a phase of its shares (split as they would be,
   * into smaller shares: see PHASED_SHARE_WORK), kernels that are not split joined into one share until
   * the next split one; then this thread and the workers that join claim the shares in order. The threads
   * meet between phases instead of being handed each kernel, which at a decoding step's ~100 small
   * kernels cost more than the split saved. `body` may touch the heap only through the kernels: JS that
   * reads or writes it runs at recording time, before any of the kernels.
   */
  inPhases(threads: number, body: () => void): void {
    if (threads <= 1 || !this.pool || this.phases) {
      body();
      return;
    }
    this.phases = [];
    this.phaseThreads = threads;
    let at = 0;
    try {
      body();
      const phases = this.phases;
      this.phases = null;
      const length = programLength(phases);
      at = this.heap._malloc(length * 8) >>> 0;
      if (!at) throw new Error('wasm kernels: the heap could not allocate a recorded program');
      programLayout(phases, new Float64Array(this.memory.buffer, at, length));
      this.phasedRuns++;
      this.pool.runProgram({ program: at, length }, threads, this.fns);
    } finally {
      this.phases = null;
      if (at) this.heap._free(at);
      for (const scratch of this.freeAfterRun.splice(0)) this.heap._free(scratch);
    }
  }

  /** Runs `body`'s kernels as one phase while inPhases records (they must read nothing another of them writes). */
  together(body: () => void): void {
    if (!this.phases || this.sharedPhase) return body();
    const phase: number[][] = (this.sharedPhase = []);
    try {
      body();
    } finally {
      this.sharedPhase = null;
    }
    if (phase.length) this.phases.push(phase);
  }

  /** Adds a kernel's shares (their calls) to the recorded program: a phase of their own, or the open together() phase. */
  private record(shares: number[][]): void {
    const phases = this.phases!;
    const last = phases[phases.length - 1];
    if (this.sharedPhase) this.sharedPhase.push(...shares);
    else if (shares.length === 1 && last?.length === 1)
      last[0].push(...shares[0]); // one thread's work either way: one share
    else phases.push(shares);
  }

  /** Calls export `fn` now. */
  private invoke(fn: keyof Exports, args: number[]): void {
    (this.exports[fn] as (...args: number[]) => void)(...args);
  }

  /** A kernel that is not split: run now, or recorded while inPhases records. */
  private call(fn: keyof Exports, args: number[]): void {
    if (this.phases) this.record([encodeShare({ calls: [{ fn, args }] }, this.indexOfExport)]);
    else this.invoke(fn, args);
  }

  /** Runs shares[0] here and the others on workers (threads() of them at most); while inPhases records, they are a phase of its program. */
  private runShares(shares: KernelShare[]): void {
    if (this.phases) this.record(shares.map((share) => encodeShare(share, this.indexOfExport)));
    else if (shares.length === 1) this.runShare(shares[0]);
    else this.pool!.run(shares, (share) => this.runShare(share));
  }

  /** A share on this thread, as kernel-threads.ts's workers run one. */
  private runShare(share: KernelShare): void {
    const calls = share.calls.map((c) => ({ fn: c.fn as keyof Exports, args: c.args.slice(), strides: c.strides }));
    for (let r = 0; r < (share.count ?? 1); r++) {
      for (const c of calls) {
        this.invoke(c.fn, c.args);
        c.strides?.forEach((stride, i) => (c.args[i] += stride));
      }
    }
  }

  /** Multiply-adds a share must reach to be split off: smaller while inPhases records (a phase costs far less than a hand-off). */
  private shareWork(): number {
    return this.phases ? PHASED_SHARE_WORK : MIN_SHARE_WORK;
  }

  /** Stops the workers (tests; a page's engine ends with its worker). */
  dispose(): void {
    this.pool?.dispose();
    this.pool = null;
  }

  /**
   * Writes b [k, n]'s whole strips of 8 columns to `packed` (packedStripsFloats(k, n) floats) for
   * productPacked. Runs now even while inPhases records: any share may read the copy it makes.
   */
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
  attendOne(
    a: { q: number; k: number; v: number; scores: number; bias: number; out: number },
    rows: number,
    keys: number,
    D: number,
    scale: number,
  ): void {
    const stride = paddedKeys(keys);
    this.call('attendScores', [a.q, a.k, a.scores, rows, keys, D, stride]);
    this.call('softmaxRows', [a.scores, a.bias, rows, stride, scale, ...ONE_BIAS_ROW]);
    this.call('attendValues', [a.scores, a.v, a.out, rows, keys, D, stride]);
  }

  /**
   * attendOne for `groups` groups of query heads at once (a decoding step's rows × key/value heads), group
   * g's operands `step` bytes after group g - 1's; whole groups are shared between threads, each with
   * scores of its own.
   */
  attendGroups(
    a: AttendOperands,
    step: AttendOperands,
    groups: number,
    rows: number,
    keys: number,
    D: number,
    scale: number,
  ): void {
    const stride = paddedKeys(keys);
    const runs = splitBatch(groups, rows * keys * D * 2, this.threads(), this.shareWork());
    this.runShares(
      runs.map(([g0, g1], i) => {
        const at = (key: keyof AttendOperands) => a[key] + g0 * step[key];
        const scores = this.scratchFor(i, rows * stride);
        return {
          count: g1 - g0,
          calls: [
            { fn: 'attendScores', args: [at('q'), at('k'), scores, rows, keys, D, stride], strides: [step.q, step.k] },
            {
              fn: 'softmaxRows',
              args: [scores, at('bias'), rows, stride, scale, ...ONE_BIAS_ROW],
              strides: [0, step.bias],
            },
            {
              fn: 'attendValues',
              args: [scores, at('v'), at('out'), rows, keys, D, stride],
              strides: [0, step.v, step.out],
            },
          ],
        };
      }),
    );
  }

  /**
   * softmax(s·scale + bias) in place over `rows` score rows of `stride` floats (a multiple of 4), row r
   * masked by the bias row at bias + ⌊r / mask.groupRows⌋·mask.groupBytes + (r mod mask.period)·mask.rowBytes
   * (attention.ts); the rows are shared between threads. With `from`, each share first copies its rows
   * of the scores from there (an op's input is never written).
   */
  maskedSoftmax(
    s: number,
    bias: number,
    rows: number,
    stride: number,
    mask: SoftmaxMask,
    scale: number,
    from?: number,
  ): void {
    const runs = splitBatch(rows, stride * SOFTMAX_WORK, this.threads(), this.shareWork());
    this.runShares(
      runs.map(([r0, r1]) => {
        const rowsAt = s + r0 * stride * 4;
        const softmax = {
          fn: 'softmaxRows',
          args: [rowsAt, bias, r1 - r0, stride, scale, r0, mask.period, mask.rowBytes, mask.groupRows, mask.groupBytes],
        };
        return {
          calls:
            from === undefined
              ? [softmax]
              : [
                  { fn: 'copyRows', args: [rowsAt, from + r0 * stride * 4, r1 - r0, stride, stride * 4, stride * 4] },
                  softmax,
                ],
        };
      }),
    );
  }

  /** softmaxGradRows over `rows` rows of `stride` floats (a multiple of 4), shared between threads: out = y·(dy − Σ dy·y)·scale per row. */
  softmaxGrad(dy: number, y: number, out: number, rows: number, stride: number, scale: number): void {
    const runs = splitBatch(rows, stride * SOFTMAX_GRAD_WORK, this.threads(), this.shareWork());
    this.runShares(
      runs.map(([r0, r1]) => ({
        calls: [
          {
            fn: 'softmaxGradRows',
            args: [dy, y, out].map((at) => at + r0 * stride * 4).concat(r1 - r0, stride, scale),
          },
        ],
      })),
    );
  }

  /** out = gate·sigmoid(gate)·up over n floats, n a multiple of 4 (swiglu.ts); out may be gate. */
  swiglu(gate: number, up: number, out: number, n: number): void {
    this.elementwise('swiglu', [gate, up], out, n);
  }

  /** SwiGLU's gradient with respect to up (`part` 'up': dy·gate·s) or gate, over n floats, n a multiple of 4 (swiglu.ts). */
  swigluGrad(part: 'gate' | 'up', arrays: { gate: number; up: number; dy: number; out: number }, n: number): void {
    const { gate, up, dy, out } = arrays;
    if (part === 'up') this.elementwise('swigluGradUp', [gate, dy], out, n);
    else this.elementwise('swigluGradGate', [gate, up, dy], out, n);
  }

  /** An elementwise kernel over n floats (a multiple of 4) of `inputs` into `out`, its runs of vectors shared between threads. */
  private elementwise(fn: keyof Exports, inputs: number[], out: number, n: number): void {
    // Split only where a hand-off pays even outside a recorded program: a decoding step's SwiGLU stays one share.
    const runs = splitElements(n, ELEMENTWISE_WORK, this.threads());
    if (runs.length === 1) return this.call(fn, [...inputs, out, n]);
    this.runShares(
      runs.map(([i0, i1]) => ({ calls: [{ fn, args: [...inputs.map((at) => at + i0 * 4), out + i0 * 4, i1 - i0] }] })),
    );
  }

  /**
   * For each of `count` groups g: dst + g·dstStride (+)= every part's `floats` floats at part.from + g·part.stride,
   * added in order (addScaled with scale 1; dst holds its start, zeros for a sum). Whole groups per share.
   */
  sumInto(
    dst: number,
    dstStride: number,
    count: number,
    parts: { from: number; stride: number; floats: number }[],
  ): void {
    const floats = parts.reduce((sum, part) => sum + part.floats, 0);
    const runs = splitBatch(count, floats, this.threads(), this.shareWork());
    this.runShares(
      runs.map(([g0, g1]) => ({
        count: g1 - g0,
        calls: parts.map((part) => ({
          fn: 'addScaled',
          args: [dst + g0 * dstStride, part.from + g0 * part.stride, part.floats, 1],
          strides: [dstStride, part.stride],
        })),
      })),
    );
  }

  /** y += scale·x over n floats at those addresses (add-scaled.ts; scale is rounded to float32, as a tfjs scalar is). */
  addScaled(y: number, x: number, n: number, scale: number): void {
    this.call('addScaled', [y, x, n, scale]);
  }

  /** `rows` runs of n floats (a multiple of 4) from src + r·srcRow to dst + r·dstRow, strides in bytes (copy-rows.ts). */
  copyRows(dst: number, src: number, rows: number, n: number, dstRow: number, srcRow: number): void {
    if (n % 4 !== 0) throw new Error(`copyRows copies whole vectors of 4 floats; got rows of ${n}`);
    this.call('copyRows', [dst, src, rows, n, dstRow, srcRow]);
  }

  /** RMSNorm over rows of `cols` floats, cols a multiple of 4 (rms-norm.ts). */
  rmsNorm(x: number, w: number, out: number, rows: number, cols: number, eps: number): void {
    this.call('rmsNorm', [x, w, out, rows, cols, eps]);
  }
  rmsNormFactor(x: number, out: number, rows: number, cols: number, eps: number): void {
    this.call('rmsNormFactor', [x, out, rows, cols, eps]);
  }
  rmsNormDx(dy: number, x: number, w: number, out: number, rows: number, cols: number, eps: number): void {
    this.call('rmsNormDx', [dy, x, w, out, rows, cols, eps]);
  }
  /** The weight's gradient, accumulated into out [cols] (zero it first). */
  rmsNormDw(dy: number, x: number, out: number, rows: number, cols: number, eps: number): void {
    this.call('rmsNormDw', [dy, x, out, rows, cols, eps]);
  }

  /** RoPE over x [B, H, T, D] with tables [T, D], or [B, 1, T, D] when `perRow`; D/2 a multiple of 4 (rope.ts). */
  rope(
    x: number,
    cos: number,
    sin: number,
    out: number,
    shape: { rows: number; D: number; T: number; H: number },
    perRow: boolean,
    inverse: boolean,
  ): void {
    this.call('rope', [x, cos, sin, out, shape.rows, shape.D, shape.T, shape.H, perRow ? 1 : 0, inverse ? -1 : 1]);
  }

  /** Writes Adam's new p, m and v of n floats to outP, outM and outV in one pass (adam.ts). */
  adam(
    arrays: { p: number; g: number; m: number; v: number; outP: number; outM: number; outV: number },
    n: number,
    h: AdamHyper,
  ): void {
    const { p, g, m, v, outP, outM, outV } = arrays;
    const decays = h.wd > 0;
    const l2 = h.kind === 'adam' && decays ? h.wd : 0; // Adam's L2 penalty, added to the gradient
    const decay = h.kind === 'adamw' && decays ? 1 - h.lr * h.wd : 1; // AdamW's decoupled decay
    const scalars = [h.lr, h.b1, 1 - h.b1, h.b2, 1 - h.b2, h.eps, h.bc1, h.bc2, l2, decay, h.gradScale];
    this.runShares(
      splitElements(n, ADAM_WORK, this.threads(), this.shareWork()).map(([i0, i1]) => ({
        calls: [
          { fn: 'adam', args: [p, g, m, v, outP, outM, outV].map((at) => at + i0 * 4).concat(i1 - i0, ...scalars) },
        ],
      })),
    );
  }

  /** Σ x² over n floats at x, in float32 (sum-squares.ts); `out` is a float of scratch it is written to. */
  sumSquares(x: number, n: number, out: number): number {
    this.exports.sumSquares(x, n, out);
    return this.floats()[out / 4];
  }

  /**
   * Scratch of at least `floats` floats for the kernel's share i: its own among the shares that may run at
   * once, those of one kernel or, while together() fills a phase, of every kernel in it.
   */
  private scratchFor(share: number, floats: number): number {
    const i = share + (this.sharedPhase?.length ?? 0);
    const s = (this.scratch[i] ??= { at: 0, floats: 0 });
    if (floats > s.floats) {
      if (s.at && this.phases)
        this.freeAfterRun.push(s.at); // a recorded call still uses it
      else if (s.at) this.heap._free(s.at);
      s.floats = 0;
      s.at = this.heap._malloc(floats * 4) >>> 0;
      if (!s.at) throw new Error(`wasm gemm: the heap could not allocate ${floats * 4} bytes of scratch`);
      s.floats = floats;
    }
    return s.at;
  }

  private warmUp(): void {
    const size = 16;
    const bytes = size * size * 4;
    const scratch = this.heap._malloc(3 * bytes) >>> 0;
    if (!scratch) return; // warm-up only saves time; a full heap shows up on the first real product
    for (let i = 0; i < WARM_UP_CALLS; i++) {
      this.product({
        a: scratch,
        b: scratch + bytes,
        c: scratch + 2 * bytes,
        m: size,
        k: size,
        n: size,
        transposeA: i % 2 === 1,
        transposeB: i % 4 >= 2,
      });
    }
    this.heap._free(scratch);
  }
}

/** Where row r of a masked softmax reads its bias row (maskedSoftmax; attention.ts's softmaxRows). */
export interface SoftmaxMask {
  period: number;
  rowBytes: number;
  groupRows: number;
  groupBytes: number;
}

/** Addresses of a group's attention operands (attendGroups), or the bytes between groups'. */
export interface AttendOperands {
  q: number;
  k: number;
  v: number;
  bias: number;
  out: number;
}

/** gemm's (and with `packed`, gemmPacked's) arguments in order. */
function gemmCallArgs(g: GemmArgs, scratch: number): number[] {
  const args = [g.a, g.b, g.c, scratch, g.m, g.k, g.n, g.aRow, g.aCol, g.bRow, g.bCol, g.cRow];
  return g.packed === undefined ? args : [...args, g.packed];
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
      simdSupported = WebAssembly.validate(
        simdModuleBytes({ sharedMemory: false, relaxedSimd: false }) as BufferSource,
      );
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
