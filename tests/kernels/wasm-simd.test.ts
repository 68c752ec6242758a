/**
 * Spindle's WebAssembly SIMD kernels (src/kernels/wasm-simd). The matrix kernel against a float64 reference, on its own memory:
 * every path of it (whole row blocks, the one-row tail, the scalar column tail, contiguous and
 * gathered B panels) in both operand layouts, with plain SIMD and with relaxed SIMD's multiply-add;
 * then through tfjs-wasm, where its gradients must replace every transpose of a training step, and the
 * whole model on wasm against cpu; the decoding step's kernels (packed products, attention, SwiGLU) against float64
 * references. (ops.test.ts checks the RMSNorm, RoPE and Adam kernels; wasm-decode.test.ts the step itself.)
 */
import * as tf from '@tensorflow/tfjs';
import v8 from 'node:v8';
import { beforeAll, describe, expect, it } from 'vitest';
import { packedStripsFloats } from '../../src/kernels/wasm-simd/gemm.ts';
import {
  HeapKernels,
  relaxedSimdAvailable,
  simdModuleBytes,
  type EmscriptenHeap,
} from '../../src/kernels/wasm-simd/heap-kernels.ts';
import { mm } from '../../src/model/ops.ts';
import { compareWithCpu, comparisonProblems } from '../../src/selftest/backend-compare.ts';
import { BATCH_MATMUL_KERNEL, MATMUL_KERNEL, product } from '../../src/kernels/wasm-matmul.ts';
import { createRng } from '../../src/rng.ts';
import { expectClose, useBackend } from '../model/helpers.ts';

// Node 20 has relaxed SIMD behind a flag (initBackend sets it too); the plain kernel is tested either way.
if (!relaxedSimdAvailable()) v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

/** A bump allocator over a fresh memory, standing in for tfjs-wasm's malloc; `freed` counts frees. */
function standaloneHeap(): EmscriptenHeap & { memory: WebAssembly.Memory; freed: number } {
  const memory = new WebAssembly.Memory({ initial: 256 });
  let top = 1024;
  const heap = {
    memory,
    asm: { memory },
    freed: 0,
    _malloc(bytes: number) {
      const at = top;
      top += Math.ceil(bytes / 64) * 64;
      if (top > memory.buffer.byteLength) memory.grow(Math.ceil((top - memory.buffer.byteLength) / 65536));
      return at;
    },
    _free() {
      heap.freed++;
    },
  };
  return heap;
}

interface Case {
  m: number;
  k: number;
  n: number;
  transposeA: boolean;
  transposeB: boolean;
}

/** Runs one product on the heap and returns C next to its float64 reference. */
function runCase(
  gemm: HeapKernels,
  heap: ReturnType<typeof standaloneHeap>,
  c: Case,
  seed: number,
): { got: Float32Array; want: Float64Array } {
  const rng = createRng(seed);
  const a = heap._malloc(c.m * c.k * 4);
  const b = heap._malloc(c.k * c.n * 4);
  const out = heap._malloc(c.m * c.n * 4);
  const f32 = new Float32Array(heap.memory.buffer);
  for (let i = 0; i < c.m * c.k; i++) f32[a / 4 + i] = rng.normal();
  for (let i = 0; i < c.k * c.n; i++) f32[b / 4 + i] = rng.normal();
  f32.fill(Number.NaN, out / 4, out / 4 + c.m * c.n); // every element must be written
  gemm.product({ a, b, c: out, ...c });
  const view = new Float32Array(heap.memory.buffer);
  const A = (i: number, p: number) => view[a / 4 + (c.transposeA ? p * c.m + i : i * c.k + p)];
  const B = (p: number, j: number) => view[b / 4 + (c.transposeB ? j * c.k + p : p * c.n + j)];
  const want = new Float64Array(c.m * c.n);
  for (let i = 0; i < c.m; i++)
    for (let j = 0; j < c.n; j++) for (let p = 0; p < c.k; p++) want[i * c.n + j] += A(i, p) * B(p, j);
  return { got: view.slice(out / 4, out / 4 + c.m * c.n), want };
}

// Sizes around the 4-row blocks and 8-column strips: whole blocks, tails of each, a single row and column.
const SIZES: [number, number, number][] = [
  [1, 1, 1],
  [4, 1, 8],
  [5, 3, 9],
  [13, 7, 19],
  [8, 16, 16],
  [3, 33, 2],
  [17, 64, 40],
];
const CASES: Case[] = SIZES.flatMap(([m, k, n]) =>
  [false, true].flatMap((transposeA) => [false, true].map((transposeB) => ({ m, k, n, transposeA, transposeB }))),
);

describe('wasm gemm on its own memory', () => {
  it('assembles a module that validates, plain and with relaxed SIMD, for unshared and shared memories', () => {
    for (const relaxedSimd of [false, true]) {
      for (const sharedMemory of [false, true])
        expect(
          WebAssembly.validate(simdModuleBytes({ relaxedSimd, sharedMemory }) as BufferSource),
          `relaxed ${relaxedSimd}, shared ${sharedMemory}`,
        ).toBe(true);
    }
  });

  for (const relaxed of [false, true]) {
    it(`matches a float64 product in every layout and at every tail size (${relaxed ? 'relaxed multiply-add' : 'plain SIMD'})`, () => {
      const heap = standaloneHeap();
      const gemm = new HeapKernels(heap, { relaxedSimd: relaxed });
      expect(gemm.relaxedSimd).toBe(relaxed);
      CASES.forEach((c, i) => {
        const { got, want } = runCase(gemm, heap, c, 100 + i);
        expectClose(
          got,
          want,
          `[${c.m}, ${c.k}] · [${c.k}, ${c.n}]${c.transposeA ? ' Aᵀ' : ''}${c.transposeB ? ' Bᵀ' : ''}`,
          1e-5,
          1e-5,
        );
      });
    });
  }

  it('grows its scratch for a larger product and frees the old one', () => {
    const heap = standaloneHeap();
    const gemm = new HeapKernels(heap);
    const freedAfterWarmUp = heap.freed;
    runCase(gemm, heap, { m: 4, k: 8, n: 8, transposeA: false, transposeB: false }, 1);
    const { got, want } = runCase(gemm, heap, { m: 40, k: 96, n: 24, transposeA: true, transposeB: false }, 2);
    expect(heap.freed).toBe(freedAfterWarmUp + 1);
    expectClose(got, want, 'after growing', 1e-5, 1e-5);
  });
});

/** Float32 arrays placed on a standalone heap; returns their addresses and a reader. */
function place(
  heap: ReturnType<typeof standaloneHeap>,
  ...arrays: (Float32Array | number)[]
): { at: number[]; read: (at: number, n: number) => Float32Array } {
  const at = arrays.map((a) => {
    const n = typeof a === 'number' ? a : a.length;
    const address = heap._malloc(Math.max(n, 1) * 4);
    const view = new Float32Array(heap.memory.buffer, address, n);
    if (typeof a === 'number')
      view.fill(Number.NaN); // an output: every element must be written
    else view.set(a);
    return address;
  });
  return { at, read: (address, n) => new Float32Array(heap.memory.buffer).slice(address / 4, address / 4 + n) };
}

const normals = (n: number, seed: number, scale = 1) => {
  const rng = createRng(seed);
  return Float32Array.from({ length: n }, () => rng.normal() * scale);
};

describe('the decoding kernels on their own memory (packed products, attention, SwiGLU)', () => {
  for (const relaxed of [false, true]) {
    it(`packed weights: packStrips once, then products of any rows read the strips (${relaxed ? 'relaxed multiply-add' : 'plain SIMD'})`, () => {
      const heap = standaloneHeap();
      const kernels = new HeapKernels(heap, { relaxedSimd: relaxed });
      for (const [m, k, n] of [
        [1, 1, 1],
        [1, 7, 9],
        [1, 8, 16],
        [3, 17, 3],
        [5, 33, 266],
        [9, 64, 40],
      ]) {
        const [a, w] = [normals(m * k, m + k), normals(k * n, n)];
        const { at, read } = place(heap, a, w, packedStripsFloats(k, n), m * n);
        kernels.packStrips(at[1], at[2], k, n);
        kernels.productPacked({ a: at[0], b: at[1], c: at[3], m, k, n }, at[2]);
        const want = Array.from({ length: m * n }, (_, i) =>
          a
            .slice(Math.floor(i / n) * k, Math.floor(i / n) * k + k)
            .reduce((sum, ap, p) => sum + ap * w[p * n + (i % n)], 0),
        );
        expectClose(read(at[3], m * n), want, `[${m}, ${k}] · [${k}, ${n}]`, 1e-5, 1e-5);
      }
    });
  }

  it('attendOne: scores, a masked softmax and the weighted values for heads sharing a key/value head', () => {
    const heap = standaloneHeap();
    const kernels = new HeapKernels(heap);
    for (const [rows, keys, D] of [
      [1, 1, 4],
      [3, 5, 8],
      [2, 8, 32],
      [4, 130, 16],
    ]) {
      const [q, k, v] = [normals(rows * D, 1), normals(keys * D, 2), normals(keys * D, 3)];
      const stride = Math.ceil(keys / 4) * 4;
      const masked = (j: number) => keys > 1 && j % 3 === 1; // every third key is padding
      const bias = Float32Array.from({ length: stride }, (_, j) => (j < keys && masked(j) ? -1e9 : 0));
      const { at, read } = place(heap, q, k, v, rows * stride, bias, rows * D);
      const scale = 1 / Math.sqrt(D);
      kernels.attendOne({ q: at[0], k: at[1], v: at[2], scores: at[3], bias: at[4], out: at[5] }, rows, keys, D, scale);
      const want: number[] = [];
      for (let r = 0; r < rows; r++) {
        const logits = Array.from({ length: keys }, (_, j) =>
          masked(j)
            ? -Infinity
            : scale * Array.from({ length: D }, (_, d) => q[r * D + d] * k[j * D + d]).reduce((a, b) => a + b, 0),
        );
        const max = Math.max(...logits);
        const e = logits.map((l) => Math.exp(l - max));
        const sum = e.reduce((a, b) => a + b, 0);
        for (let d = 0; d < D; d++) want.push(e.reduce((acc, ej, j) => acc + (ej / sum) * v[j * D + d], 0));
      }
      expectClose(read(at[5], rows * D), want, `${rows} heads × ${keys} keys × D ${D}`, 1e-6, 1e-5);
      const weights = read(at[3], rows * stride);
      for (let r = 0; r < rows; r++)
        for (let j = 0; j < keys; j++)
          if (masked(j)) expect(weights[r * stride + j], `masked key ${j}`).toBeLessThan(1e-30);
    }
  });

  it('SwiGLU: gate·sigmoid(gate)·up with its exp within a few ulp, out to where exp overflows', () => {
    const heap = standaloneHeap();
    const kernels = new HeapKernels(heap);
    const n = 1024;
    const gate = Float32Array.from({ length: n }, (_, i) => -100 + (200 * i) / n); // through exp's clamped range
    const up = normals(n, 5);
    const { at, read } = place(heap, gate, up, n);
    kernels.swiglu(at[0], at[1], at[2], n);
    const got = read(at[2], n);
    for (let i = 0; i < n; i++) {
      const want = (gate[i] / (1 + Math.exp(-gate[i]))) * up[i];
      expect(Math.abs(got[i] - want), `gate ${gate[i]}: got ${got[i]}, want ${want}`).toBeLessThanOrEqual(
        1e-6 * Math.abs(want) + 1e-30,
      );
    }
  });

  it('addScaled: y + float32(scale·x) per element, bit for bit, the last n mod 4 included', () => {
    const heap = standaloneHeap();
    const kernels = new HeapKernels(heap);
    for (const n of [4, 10, 131]) {
      const [y, x] = [normals(n, 7), normals(n, 8, 1e3)];
      const { at, read } = place(heap, y, x);
      kernels.addScaled(at[0], at[1], n, 0.37);
      const want = Float32Array.from(y, (yi, i) => yi + Math.fround(x[i] * Math.fround(0.37)));
      expect(Array.from(read(at[0], n))).toEqual(Array.from(want));
    }
  });

  it('copyRows: each row’s floats to its strided place, nothing between rows touched', () => {
    const heap = standaloneHeap();
    const kernels = new HeapKernels(heap);
    const [rows, n, gap] = [3, 8, 4];
    const src = normals(rows * n, 9);
    const dst = new Float32Array(rows * (n + gap)).fill(-1);
    const { at, read } = place(heap, dst, src);
    kernels.copyRows(at[0], at[1], rows, n, (n + gap) * 4, n * 4);
    const want = Float32Array.from(dst, (_, i) =>
      i % (n + gap) < n ? src[Math.floor(i / (n + gap)) * n + (i % (n + gap))] : -1,
    );
    expect(Array.from(read(at[0], rows * (n + gap)))).toEqual(Array.from(want));
    expect(() => kernels.copyRows(at[0], at[1], 1, 6, 0, 0)).toThrow('whole vectors of 4');
  });
});

describe('the kernels through tfjs-wasm', () => {
  beforeAll(async () => {
    await useBackend('wasm');
  });

  const random = (shape: number[], seed: number) => {
    const rng = createRng(seed);
    return tf.tensor(
      Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => rng.normal()),
      shape,
    );
  };

  it('SpindleMatMul: aᵀ·b summed over leading axes, a·bᵀ, and an empty inner size', () => {
    const a = random([2, 5, 6], 1);
    const b = random([2, 5, 7], 2);
    expectClose(
      product(MATMUL_KERNEL, a, b, { transposeA: true }).dataSync(),
      tf.matMul(a.reshape([10, 6]), b.reshape([10, 7]), true).dataSync(),
      'aᵀ·b',
    );
    const w = random([7, 6], 3);
    expectClose(
      product(MATMUL_KERNEL, a, w, { transposeB: true }).dataSync(),
      tf.matMul(a.reshape([10, 6]), w, false, true).dataSync(),
      'a·wᵀ',
    );
    const empty = product(MATMUL_KERNEL, tf.zeros([3, 0]), tf.zeros([0, 5]));
    expect(empty.shape).toEqual([3, 5]);
    expect(Array.from(empty.dataSync())).toEqual(new Array(15).fill(0));
  });

  it('SpindleBatchMatMul: either operand transposed, and the gradients of both', () => {
    const a = random([3, 6, 5], 4); // [N, k, m] read as Aᵀ
    const b = random([3, 7, 6], 5); // [N, n, k] read as Bᵀ
    const weights = random([3, 5, 7], 6);
    const ours = (x: tf.Tensor, y: tf.Tensor) =>
      tf.sum(tf.mul(product(BATCH_MATMUL_KERNEL, x, y, { transposeA: true }), weights));
    const theirs = (x: tf.Tensor, y: tf.Tensor) => tf.sum(tf.mul(tf.matMul(x, y, true), weights));
    const bT = tf.transpose(b, [0, 2, 1]); // [N, k, n]
    const [da, db] = tf.grads(ours)([a, bT]);
    const [ra, rb] = tf.grads(theirs)([a, bT]);
    expectClose(da.dataSync(), ra.dataSync(), 'gradient of a');
    expectClose(db.dataSync(), rb.dataSync(), 'gradient of b');
    const c = random([3, 5, 6], 7);
    expectClose(
      product(BATCH_MATMUL_KERNEL, c, b, { transposeB: true }).dataSync(),
      tf.matMul(c, b, false, true).dataSync(),
      'a·bᵀ',
    );
  });

  it("a product's gradients transpose nothing: no Transpose kernel runs in mm's backward pass", async () => {
    const x = tf.variable(random([12, 16], 8));
    const w = tf.variable(random([16, 24], 9));
    const profile = await tf.profile(() => {
      const { value, grads } = tf.variableGrads(() => tf.sum(mm(x, w)) as tf.Scalar, [x, w]);
      tf.dispose([value, ...Object.values(grads)]);
    });
    const names = profile.kernels.map((k) => k.name);
    expect(names.filter((n) => n === MATMUL_KERNEL)).toHaveLength(3); // forward, d/dx, d/dw
    expect(names).not.toContain('Transpose');
  });

  it('the whole model on wasm agrees with cpu: logits, loss, full and LoRA gradients, greedy tokens', async () => {
    const result = await compareWithCpu('wasm');
    expect(comparisonProblems(result)).toEqual([]);
    await useBackend('wasm');
  });
});
