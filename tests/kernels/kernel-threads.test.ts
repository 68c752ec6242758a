/**
 * Spindle's kernels on several threads (src/kernels/wasm-simd/kernel-threads.ts, work-split.ts): every
 * product, a decoding step's attention and Adam, split between threads must give the very bits one thread gives, on a shared memory of its
 * own and through tfjs-wasm (whose heap Node shares: shared-heap.ts), for a training step's products
 * and gradients and for a batched decoding step.
 */
import * as tf from '@tensorflow/tfjs';
import v8 from 'node:v8';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packedStripsFloats } from '../../src/kernels/wasm-simd/gemm.ts';
import { splitBatch, splitElements, splitProduct, type GemmArgs } from '../../src/kernels/wasm-simd/work-split.ts';
import {
  HeapKernels,
  heapKernelsOf,
  kernelThreadSetting,
  relaxedSimdAvailable,
  setKernelThreads,
  type EmscriptenHeap,
  type TfjsWasmBackend,
} from '../../src/kernels/wasm-simd/heap-kernels.ts';
import { shareDefinedMemory } from '../../src/kernels/wasm-simd/shared-heap.ts';
import { compareThreadCounts } from '../../src/selftest/threads-check.ts';
import { createRng } from '../../src/rng.ts';
import { useBackend } from '../model/helpers.ts';

if (!relaxedSimdAvailable()) v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

/** A bump allocator over a fresh shared memory, standing in for tfjs-wasm's malloc. */
function sharedHeap(): EmscriptenHeap & { memory: WebAssembly.Memory } {
  const memory = new WebAssembly.Memory({ initial: 256, maximum: 4096, shared: true });
  let top = 1024;
  return {
    memory,
    asm: { memory },
    _malloc(bytes: number) {
      const at = top;
      top += Math.ceil(bytes / 64) * 64;
      if (top > memory.buffer.byteLength) memory.grow(Math.ceil((top - memory.buffer.byteLength) / 65536));
      return at;
    },
    _free() {},
  };
}

/** `n` random floats placed on the heap; returns the address. */
function place(heap: ReturnType<typeof sharedHeap>, n: number, seed: number): number {
  const at = heap._malloc(n * 4);
  const rng = createRng(seed);
  const view = new Float32Array(heap.memory.buffer, at, n);
  for (let i = 0; i < n; i++) view[i] = rng.normal();
  return at;
}

const bits = (heap: ReturnType<typeof sharedHeap>, at: number, n: number) =>
  new Uint32Array(heap.memory.buffer).slice(at / 4, at / 4 + n);

describe('wasm-simd/shared-heap', () => {
  it('makes a module’s own memory shared: the limits flag with a maximum becomes shared with a maximum', () => {
    // (module (memory (export "m") 1 2)): a memory section, then its export.
    const bytes = Uint8Array.from([0, 97, 115, 109, 1, 0, 0, 0, 5, 4, 1, 1, 1, 2, 7, 5, 1, 1, 109, 2, 0]);
    const memoryOf = (b: Uint8Array) =>
      new WebAssembly.Instance(new WebAssembly.Module(b as BufferSource)).exports.m as WebAssembly.Memory;
    const [plain, shared] = [memoryOf(bytes), memoryOf(shareDefinedMemory(bytes))];
    expect(plain.buffer instanceof SharedArrayBuffer).toBe(false);
    expect(shared.buffer instanceof SharedArrayBuffer).toBe(true);
    expect(bytes[11], 'the input is left alone').toBe(1);
  });
});

describe('products split between threads on a shared memory', () => {
  const heap = sharedHeap();
  const one = new HeapKernels(heap, { threads: 1 });
  const three = new HeapKernels(heap, { threads: 3 });
  afterAll(() => three.dispose());

  it('starts its workers', async () => {
    expect(await three.threadsReady()).toBe(3);
    expect(three.threadsFailure).toBeNull();
  });

  // Wider than tall (bands of columns, the scalar tail in the last) and taller than wide (bands of rows, a one-row tail).
  const sizes: [number, number, number][] = [
    [67, 257, 203],
    [261, 96, 150],
    [9, 400, 1031],
  ];
  for (const [m, k, n] of sizes) {
    for (const [transposeA, transposeB] of [
      [false, false],
      [true, false],
      [false, true],
      [true, true],
    ]) {
      it(`[${m}, ${k}] · [${k}, ${n}]${transposeA ? ' Aᵀ' : ''}${transposeB ? ' Bᵀ' : ''}: the same bits on three threads as on one`, () => {
        const [a, b] = [place(heap, m * k, m), place(heap, k * n, n)];
        const [c1, c3] = [heap._malloc(m * n * 4), heap._malloc(m * n * 4)];
        one.product({ a, b, c: c1, m, k, n, transposeA, transposeB });
        three.product({ a, b, c: c3, m, k, n, transposeA, transposeB });
        expect(bits(heap, c3, m * n)).toEqual(bits(heap, c1, m * n));
      });
    }
  }

  it('splits those products: a test of the split must not pass by running on one thread', () => {
    for (const [m, k, n] of sizes) {
      const g: GemmArgs = { a: 0, b: 0, c: 0, m, k, n, aRow: k * 4, aCol: 4, bRow: n * 4, bCol: 4, cRow: n * 4 };
      expect(splitProduct(g, 3).length, `[${m}, ${k}, ${n}]`).toBe(3);
    }
  });

  it('a batch of products, split by whole slices, and packed weights for a few rows, split by column strips', () => {
    const [count, m, k, n] = [7, 64, 128, 72];
    const [a, b] = [place(heap, count * m * k, 1), place(heap, count * k * n, 2)];
    const [c1, c3] = [heap._malloc(count * m * n * 4), heap._malloc(count * m * n * 4)];
    const strides: [number, number, number] = [m * k * 4, k * n * 4, m * n * 4];
    one.products({ a, b, c: c1, m, k, n, transposeA: false, transposeB: true }, count, strides);
    three.products({ a, b, c: c3, m, k, n, transposeA: false, transposeB: true }, count, strides);
    expect(bits(heap, c3, count * m * n)).toEqual(bits(heap, c1, count * m * n));

    for (const [rows, inner, cols] of [
      [1, 1024, 3203],
      [16, 256, 770],
    ]) {
      const [x, w] = [place(heap, rows * inner, 3), place(heap, inner * cols, 4)];
      const packed = heap._malloc(packedStripsFloats(inner, cols) * 4);
      one.packStrips(w, packed, inner, cols);
      const [y1, y3] = [heap._malloc(rows * cols * 4), heap._malloc(rows * cols * 4)];
      one.productPacked({ a: x, b: w, c: y1, m: rows, k: inner, n: cols }, packed);
      three.productPacked({ a: x, b: w, c: y3, m: rows, k: inner, n: cols }, packed);
      expect(bits(heap, y3, rows * cols), `[${rows}, ${inner}] · [${inner}, ${cols}] packed`).toEqual(
        bits(heap, y1, rows * cols),
      );
    }
  });
});

describe('a share that fails', () => {
  it('makes the kernel throw once no thread is still in a share, and the kernels work on after it', async () => {
    const heap = sharedHeap();
    const [one, two] = [new HeapKernels(heap, { threads: 1 }), new HeapKernels(heap, { threads: 2 })];
    expect(await two.threadsReady()).toBe(2);
    const [m, k, n] = [128, 256, 64]; // bands of rows 0–63 and 64–127
    const [a, b] = [place(heap, m * k, 1), place(heap, k * n, 2)];
    const end = heap.memory.buffer.byteLength;
    expect(() => two.product({ a, b, c: end - 64 * n * 4, m, k, n, transposeA: false, transposeB: false })).toThrow(
      'a share of a kernel failed',
    );
    const [c1, c2] = [heap._malloc(m * n * 4), heap._malloc(m * n * 4)];
    one.product({ a, b, c: c1, m, k, n, transposeA: false, transposeB: false });
    two.product({ a, b, c: c2, m, k, n, transposeA: false, transposeB: false });
    expect(bits(heap, c2, m * n)).toEqual(bits(heap, c1, m * n));
    two.dispose();
  });
});

describe('a recorded program of phases (inPhases) on a shared memory', () => {
  /** h = x·W1, out = h·W2, out += 0.5·h: each kernel reads what the one before wrote. Returns out's floats. */
  function chain(kernels: HeapKernels, heap: ReturnType<typeof sharedHeap>, out: number) {
    const [m, k, n] = [16, 96, 80];
    const [x, w1, w2] = [place(heap, m * k, 1), place(heap, k * n, 2), place(heap, n * n, 3)];
    const h = heap._malloc(m * n * 4);
    kernels.product({ a: x, b: w1, c: h, m, k, n, transposeA: false, transposeB: false });
    kernels.product({ a: h, b: w2, c: out, m, k: n, n, transposeA: false, transposeB: false });
    kernels.addScaled(out, h, m * n, 0.5);
    return m * n;
  }

  it('gives the bits one thread gives, its products split into phases that threads claim', async () => {
    const heap = sharedHeap();
    const [one, three] = [new HeapKernels(heap, { threads: 1 }), new HeapKernels(heap, { threads: 3 })];
    expect(await three.threadsReady()).toBe(3);
    const [o1, o3] = [heap._malloc(16 * 80 * 4), heap._malloc(16 * 80 * 4)];
    const n = chain(one, heap, o1);
    three.inPhases(3, () => chain(three, heap, o3));
    expect(three.phasedRuns).toBe(1);
    expect(bits(heap, o3, n)).toEqual(bits(heap, o1, n));
    three.dispose();
  });

  it('runs whole on this thread when no worker joins, and a failed share fails the run without stalling it', async () => {
    const heap = sharedHeap();
    const two = new HeapKernels(heap, { threads: 2 });
    expect(await two.threadsReady()).toBe(2);
    const [m, k, n] = [128, 64, 64];
    const [a, b] = [place(heap, m * k, 1), place(heap, k * n, 2)];
    const end = heap.memory.buffer.byteLength;
    expect(() =>
      two.inPhases(2, () => two.product({ a, b, c: end - 64 * n * 4, m, k, n, transposeA: false, transposeB: false })),
    ).toThrow('a share of a kernel failed');
    const [o1, o2, o3] = [heap._malloc(16 * 80 * 4), heap._malloc(16 * 80 * 4), heap._malloc(16 * 80 * 4)];
    const size = chain(new HeapKernels(heap, { threads: 1 }), heap, o1);
    two.inPhases(2, () => chain(two, heap, o2));
    expect(bits(heap, o2, size), 'after the failure').toEqual(bits(heap, o1, size));
    two.dispose();

    const unstarted = new HeapKernels(heap, { threads: 2 }); // its worker is never started: every share is left to this thread
    unstarted.inPhases(2, () => chain(unstarted, heap, o3));
    expect(unstarted.phasedRuns).toBe(1);
    expect(bits(heap, o3, size)).toEqual(bits(heap, o1, size));
  });
});

describe('attention split between threads on a shared memory', () => {
  it('attendGroups: whole groups of heads per thread, each with its own scores, give the bits one thread gives', async () => {
    const heap = sharedHeap();
    const [one, three] = [new HeapKernels(heap, { threads: 1 }), new HeapKernels(heap, { threads: 3 })];
    expect(await three.threadsReady()).toBe(3);
    const [groups, rows, keys, D] = [32, 4, 701, 32];
    const stride = Math.ceil(keys / 4) * 4;
    const [q, k, v, bias] = [
      place(heap, groups * rows * D, 1),
      place(heap, groups * keys * D, 2),
      place(heap, groups * keys * D, 3),
      place(heap, groups * stride, 4),
    ];
    const [out1, out3] = [heap._malloc(groups * rows * D * 4), heap._malloc(groups * rows * D * 4)];
    const step = { q: rows * D * 4, k: keys * D * 4, v: keys * D * 4, bias: stride * 4, out: rows * D * 4 };
    one.attendGroups({ q, k, v, bias, out: out1 }, step, groups, rows, keys, D, 1 / Math.sqrt(D));
    three.attendGroups({ q, k, v, bias, out: out3 }, step, groups, rows, keys, D, 1 / Math.sqrt(D));
    expect(bits(heap, out3, groups * rows * D)).toEqual(bits(heap, out1, groups * rows * D));
    expect(splitBatch(groups, rows * keys * D * 2, 3)).toHaveLength(3);
    three.dispose();
  });
});

describe('Adam split between threads on a shared memory', () => {
  it('runs of whole vectors per thread, the tail in the last, give the bits one thread gives, for m, v and p', async () => {
    const heap = sharedHeap();
    const [one, three] = [new HeapKernels(heap, { threads: 1 }), new HeapKernels(heap, { threads: 3 })];
    expect(await three.threadsReady()).toBe(3);
    const n = 300_003;
    const [p, g, m] = [place(heap, n, 1), place(heap, n, 2), place(heap, n, 3)];
    const v = place(heap, n, 4);
    new Float32Array(heap.memory.buffer, v, n).forEach((x, i, a) => (a[i] = x * x)); // a second moment is not negative
    const h = {
      kind: 'adamw' as const,
      lr: 1e-3,
      b1: 0.9,
      b2: 0.999,
      eps: 1e-8,
      wd: 0.01,
      bc1: 0.1,
      bc2: 0.001,
      gradScale: 0.5,
    };
    const outputs = () => ({ outP: heap._malloc(n * 4), outM: heap._malloc(n * 4), outV: heap._malloc(n * 4) });
    const [out1, out3] = [outputs(), outputs()];
    one.adam({ p, g, m, v, ...out1 }, n, h);
    three.adam({ p, g, m, v, ...out3 }, n, h);
    for (const part of ['outP', 'outM', 'outV'] as const)
      expect(bits(heap, out3[part], n), part).toEqual(bits(heap, out1[part], n));
    expect(splitElements(n, 16, 3)).toEqual([
      [0, 100000],
      [100000, 200000],
      [200000, n],
    ]);
    three.dispose();
  });
});

describe('kernel threads through tfjs-wasm in Node', () => {
  const setting = kernelThreadSetting();
  beforeAll(async () => {
    await useBackend('wasm');
  });
  afterAll(() => setKernelThreads(setting));

  it('runs over a shared heap, with workers ready', async () => {
    const kernels = heapKernelsOf((tf.backend() as unknown as TfjsWasmBackend).wasm);
    expect(kernels.floats().buffer instanceof SharedArrayBuffer).toBe(true);
    setKernelThreads(2);
    expect(await kernels.threadsReady()).toBe(2);
  });

  it('a training step’s loss and gradients, and a batched decoding step’s logits, are the same bits on two threads as on one', async () => {
    const check = await compareThreadCounts(2);
    expect(check.threads).toBe(2);
    expect(check.compared.length).toBeGreaterThan(10);
    expect(check.differing).toEqual([]);
    expect(check.splitSteps, 'both decoding steps ran as recorded programs').toBe(2);
  });
});
