/**
 * The products the transformer is built from, on wasm (where they run Spindle's kernels,
 * src/kernels/wasm-matmul.ts) against tfjs's plain matMul and its gradients; and the fused kernels
 * (RMSNorm, RoPE, SwiGLU, Adam) against their composite forms.
 */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { applyRope, bmm, mm, rmsNorm, ropeTables, sumOfSquares, swiglu } from '../../src/model/ops.ts';
import {
  ADAM_STEP_KERNEL,
  SUM_SQUARES_KERNEL,
  RMS_NORM_KERNEL,
  ROPE_KERNEL,
  SWIGLU_KERNEL,
} from '../../src/kernels/fused.ts';
import { adamUpdate, type AdamHyper } from '../../src/train/adam-update.ts';
import { createRng } from '../../src/rng.ts';
import { expectClose, useBackend } from './helpers.ts';

function random(shape: number[], seed: number): tf.Tensor {
  const rng = createRng(seed);
  return tf.tensor(
    Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => rng.normal()),
    shape,
  );
}

beforeAll(async () => {
  await useBackend('wasm');
});

describe('bmm', () => {
  // [2, 3] batch of [64, 32] · [32, 48]: whole 4 × 8 blocks; [2, 2, 1, 32] · [.., 32, 7] is a decoding step's one-row, tail-column shape.
  for (const [aShape, bShape] of [
    [
      [2, 3, 64, 32],
      [2, 3, 32, 48],
    ],
    [
      [2, 2, 1, 32],
      [2, 2, 32, 7],
    ],
  ]) {
    it(`matches matMul and its gradients for [${aShape}] · [${bShape}]`, () => {
      const a = random(aShape, 1);
      const b = random(bShape, 2);
      const weights = random([...aShape.slice(0, -1), bShape[bShape.length - 1]], 3); // a loss that weighs every output differently
      const loss = (f: (x: tf.Tensor, y: tf.Tensor) => tf.Tensor) => (x: tf.Tensor, y: tf.Tensor) =>
        tf.sum(tf.mul(f(x, y), weights));
      expectClose(bmm(a, b).dataSync(), tf.matMul(a, b).dataSync(), 'value');
      const [da, db] = tf.grads(loss(bmm))([a, b]);
      const [ra, rb] = tf.grads(loss((x, y) => tf.matMul(x, y)))([a, b]);
      expect(da.shape).toEqual(a.shape);
      expect(db.shape).toEqual(b.shape);
      expectClose(da.dataSync(), ra.dataSync(), 'gradient of a');
      expectClose(db.dataSync(), rb.dataSync(), 'gradient of b');
    });

    it(`with transposeB, matches matMul(a, bᵀ) and its gradients for [${aShape}] · [${bShape}]ᵀ`, () => {
      const a = random(aShape, 4);
      const bT = random([...bShape.slice(0, -2), bShape[bShape.length - 1], bShape[bShape.length - 2]], 5); // [..., n, k]
      const weights = random([...aShape.slice(0, -1), bShape[bShape.length - 1]], 6);
      const loss = (f: (x: tf.Tensor, y: tf.Tensor) => tf.Tensor) => (x: tf.Tensor, y: tf.Tensor) =>
        tf.sum(tf.mul(f(x, y), weights));
      expectClose(bmm(a, bT, true).dataSync(), tf.matMul(a, bT, false, true).dataSync(), 'value');
      const [da, db] = tf.grads(loss((x, y) => bmm(x, y, true)))([a, bT]);
      const [ra, rb] = tf.grads(loss((x, y) => tf.matMul(x, y, false, true)))([a, bT]);
      expect(db.shape).toEqual(bT.shape);
      expectClose(da.dataSync(), ra.dataSync(), 'gradient of a');
      expectClose(db.dataSync(), rb.dataSync(), 'gradient of b');
    });
  }
});

describe('mm', () => {
  it('matches matMul, and differentiates with respect to either operand alone', () => {
    const x = tf.variable(random([20, 16], 4));
    const w = tf.variable(random([16, 12], 5));
    const weights = random([20, 12], 6);
    expectClose(mm(x, w).dataSync(), tf.matMul(x, w).dataSync(), 'value');
    const f = () => tf.sum(tf.mul(mm(x, w), weights)) as tf.Scalar;
    const reference = tf.variableGrads(() => tf.sum(tf.mul(tf.matMul(x, w), weights)) as tf.Scalar, [x, w]).grads;
    const onlyX = tf.variableGrads(f, [x]).grads;
    const onlyW = tf.variableGrads(f, [w]).grads;
    expect(Object.keys(onlyX)).toEqual([x.name]);
    expectClose(onlyX[x.name].dataSync(), reference[x.name].dataSync(), 'gradient of x');
    expectClose(onlyW[w.name].dataSync(), reference[w.name].dataSync(), 'gradient of w');
  });

  it('never computes the gradient of an operand that is not trained (a frozen base weight under LoRA)', async () => {
    const x = tf.variable(random([20, 16], 7));
    const frozen = random([16, 12], 8);
    const profile = await tf.profile(() => {
      const { value, grads } = tf.variableGrads(() => tf.sum(mm(x, frozen)) as tf.Scalar, [x]);
      tf.dispose([value, ...Object.values(grads)]);
    });
    expect(profile.kernels.filter((k) => k.name === 'SpindleMatMul').length).toBe(2); // forward, and d/dx only
  });

  it('takes a [..., k] operand as it is: the value and both gradients of a [2, 3, k] · [k, n] product', () => {
    const x = random([2, 3, 16], 9);
    const w = random([16, 12], 10);
    const weights = random([2, 3, 12], 11);
    const loss = (f: (a: tf.Tensor, b: tf.Tensor) => tf.Tensor) => (a: tf.Tensor, b: tf.Tensor) =>
      tf.sum(tf.mul(f(a, b), weights));
    const flat = (a: tf.Tensor, b: tf.Tensor) => tf.matMul(a.reshape([6, 16]), b).reshape([2, 3, 12]);
    expect(mm(x, w).shape).toEqual([2, 3, 12]);
    expectClose(mm(x, w).dataSync(), flat(x, w).dataSync(), 'value');
    const [dx, dw] = tf.grads(loss(mm))([x, w]);
    const [rx, rw] = tf.grads(loss(flat))([x, w]);
    expect(dx.shape).toEqual([2, 3, 16]);
    expectClose(dx.dataSync(), rx.dataSync(), 'gradient of x');
    expectClose(dw.dataSync(), rw.dataSync(), 'gradient of w');
  });

  it('refuses batched operands, naming bmm', () => {
    expect(() => mm(tf.zeros([2, 3, 4]), tf.zeros([2, 4, 5]))).toThrow(/bmm/);
  });
});

/** Runs `f` on wasm (fused kernels) and on cpu (their composite forms) over the same inputs; compares every output. */
async function expectFusedMatchesComposite(
  inputs: { shape: number[]; seed: number }[],
  f: (xs: tf.Tensor[]) => tf.Tensor[],
  kernel: string,
  names: string[],
): Promise<void> {
  const data = inputs.map((i) => random(i.shape, i.seed).dataSync());
  const run = () => f(inputs.map((i, k) => tf.tensor(data[k], i.shape))).map((t) => t.dataSync());
  const profile = await tf.profile(() => f(inputs.map((i) => tf.ones(i.shape))));
  expect(profile.kernelNames).toContain(kernel);
  const wasm = run();
  await tf.setBackend('cpu'); // no fused kernels there
  const cpu = run();
  await tf.setBackend('wasm');
  names.forEach((what, i) => expectClose(wasm[i], cpu[i], what));
}

/** The op, the loss Σ op(x)·g and the gradients of the first `trained` inputs. */
function withGradients(op: (...xs: tf.Tensor[]) => tf.Tensor, trained: number) {
  return (xs: tf.Tensor[]) => {
    const g = xs[xs.length - 1];
    const args = xs.slice(0, -1);
    const loss = (...t: tf.Tensor[]) => tf.sum(tf.mul(op(...t, ...args.slice(trained)), g));
    const { value, grads } = tf.valueAndGrads(loss)(args.slice(0, trained));
    return [op(...args), value, ...grads];
  };
}

describe('fused kernels over the wasm heap against their composite forms on cpu', () => {
  // Rows of 24 run the SIMD kernels (whole vectors), rows of 6 the JS loop.
  for (const shape of [
    [2, 5, 24],
    [3, 6],
  ]) {
    it(`rmsNorm: value, loss and the gradients of x and the weight, for a [${shape}] input`, async () => {
      const C = shape[shape.length - 1];
      await expectFusedMatchesComposite(
        [
          { shape, seed: 12 },
          { shape: [C], seed: 13 },
          { shape, seed: 14 },
        ],
        withGradients((x, w) => rmsNorm(x, w as tf.Tensor1D, 1e-5), 2),
        RMS_NORM_KERNEL,
        ['value', 'loss', 'gradient of x', 'gradient of the weight'],
      );
    });
  }

  it('Adam and AdamW in one SIMD pass give the tfjs-ops update bit for bit (sizes with and without a scalar tail)', async () => {
    const base = { lr: 0.01, b1: 0.9, b2: 0.999, eps: 1e-8, bc1: 1 - 0.9 ** 3, bc2: 1 - 0.999 ** 3, gradScale: 0.5 };
    const settings = [
      { ...base, kind: 'adamw', wd: 0.1 },
      { ...base, kind: 'adam', wd: 0.01 },
      { ...base, kind: 'adam', wd: 0, gradScale: 1 },
    ] as AdamHyper[];
    for (const n of [32, 37]) {
      const inputs = [1, 2, 3, 4].map((seed) => random([n], 20 + seed).dataSync());
      inputs[3] = inputs[3].map(Math.abs); // v ≥ 0
      const update = (h: AdamHyper) => {
        const [p, g, m, v] = inputs.map((d) => tf.tensor1d(d));
        const next = adamUpdate(p, g, m, v, h);
        return [next.m, next.v, next.p].map((t) => Array.from(t.dataSync()));
      };
      const profile = await tf.profile(
        () =>
          adamUpdate(
            ...([0, 1, 2, 3].map(() => tf.ones([n])) as [tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor]),
            settings[0],
          ).p,
      );
      expect(profile.kernelNames).toContain(ADAM_STEP_KERNEL);
      const wasm = settings.map(update);
      await tf.setBackend('cpu'); // no fused kernel there: tfjs ops
      const cpu = settings.map(update);
      await tf.setBackend('wasm');
      expect(wasm).toEqual(cpu);
    }
  });

  // Heads of 8 run the SIMD kernel (half a head is a whole vector), heads of 12 the JS loop.
  for (const D of [8, 12]) {
    it(`RoPE: value and the gradient of x, with shared [T, D] tables and per-row [B, 1, T, D] ones (D = ${D})`, async () => {
      const { cos, sin, rotate } = ropeTables(
        16,
        D,
        Float64Array.from({ length: D / 2 }, (_, i) => 10 ** -i),
      );
      const rows = [0, 1, 2, 3, 4, 9, 8, 7, 6, 5];
      const tables = [
        [cos.slice([3, 0], [5, D]), sin.slice([3, 0], [5, D])],
        [tf.gather(cos, rows).reshape([2, 1, 5, D]), tf.gather(sin, rows).reshape([2, 1, 5, D])],
      ];
      for (const [c, s] of tables) {
        await expectFusedMatchesComposite(
          [
            { shape: [2, 3, 5, D], seed: 15 },
            { shape: [2, 3, 5, D], seed: 16 },
          ],
          withGradients((x) => applyRope(x as tf.Tensor4D, c, s, rotate), 1),
          ROPE_KERNEL,
          ['value', 'loss', 'gradient of x'],
        );
      }
    });
  }

  // The fused kernel runs for one position per row (a decoding step; ops.ts says why), so the shapes have one.
  it('SwiGLU: value and the gradients of gate and up', async () => {
    await expectFusedMatchesComposite(
      [
        { shape: [3, 1, 20], seed: 17 },
        { shape: [3, 1, 20], seed: 18 },
        { shape: [3, 1, 20], seed: 19 },
      ],
      withGradients((gate, up) => swiglu(gate, up), 2),
      SWIGLU_KERNEL,
      ['value', 'loss', 'gradient of gate', 'gradient of up'],
    );
  });
});

describe('gather along the first axis on wasm (wasm-kernels.ts: a byte copy per row)', () => {
  it('picks whole rows of float32, int32 and bool tensors, repeats and any index shape included, as cpu does', async () => {
    const cases = [
      { x: random([5, 2, 3, 4], 31), indices: [4, 0, 0, 2] },
      {
        x: tf.tensor2d(
          [
            [1, 2],
            [3, 4],
            [5, 6],
          ],
          undefined,
          'int32',
        ),
        indices: [
          [2, 1],
          [0, 2],
        ],
      },
      { x: tf.tensor1d([1, 0, 1], 'bool'), indices: [1, 2, 1] },
      { x: random([4, 3], 32), indices: [] as number[] },
    ];
    for (const { x, indices } of cases) {
      const idx = tf.tensor(indices, undefined, 'int32');
      const got = tf.gather(x, idx, 0);
      const [shape, values] = [got.shape, await got.data()];
      await useBackend('cpu');
      const want = tf.gather(tf.tensor(await x.data(), x.shape, x.dtype), tf.tensor(indices, undefined, 'int32'), 0);
      expect(shape).toEqual(want.shape);
      expect(Array.from(values)).toEqual(Array.from(await want.data()));
      await useBackend('wasm');
    }
  });

  it('refuses an index outside the rows, naming it, instead of reading memory it does not own', () => {
    const x = random([3, 4], 33);
    expect(() => tf.gather(x, tf.tensor1d([0, 3], 'int32'), 0)).toThrow(/index 3 is outside the 3 rows/);
    expect(() => tf.gather(x, tf.tensor1d([-1], 'int32'), 0)).toThrow(/index -1/);
  });

  it('leaves other axes to tfjs-wasm: a gather along the last axis still works', async () => {
    const x = tf.tensor2d([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    expect(Array.from(await tf.gather(x, tf.tensor1d([2, 0], 'int32'), 1).data())).toEqual([3, 1, 6, 4]);
  });
});

describe('sum of squares over many tensors (a global gradient norm)', () => {
  it('is one kernel on wasm and matches the squares summed as ops on cpu, tensors with and without a scalar tail', async () => {
    const shapes = [[37], [8, 64], [3, 5, 7], [1]];
    const data = shapes.map((shape, i) => random(shape, 40 + i).dataSync());
    const tensors = shapes.map((shape, i) => tf.tensor(data[i], shape));
    const profile = await tf.profile(() => sumOfSquares(tensors));
    expect(profile.kernelNames).toEqual([SUM_SQUARES_KERNEL]);
    const wasm = (await sumOfSquares(tensors).data())[0];
    const exact = data.reduce((sum, d) => sum + Array.from(d).reduce((s, x) => s + x * x, 0), 0);
    expect(Math.abs(wasm - exact) / exact).toBeLessThan(1e-6);
    await useBackend('cpu');
    const cpu = (await sumOfSquares(shapes.map((shape, i) => tf.tensor(data[i], shape))).data())[0];
    await useBackend('wasm');
    expect(Math.abs(wasm - cpu) / exact).toBeLessThan(1e-6);
  });
});

describe('reading tensors off the wasm heap (wasm-kernels.ts readHeapByElement)', () => {
  it('gives float32, int32 and bool tensors back whole and in ranges, as written', async () => {
    const backend = tf.backend() as unknown as {
      readSync: ((dataId: object, start?: number, end?: number) => ArrayLike<number>) & { byElement?: boolean };
    };
    expect(backend.readSync.byElement, 'the override is installed').toBe(true);
    const floats = Float32Array.from({ length: 37 }, (_, i) => i / 7 - 2);
    const ints = Int32Array.from({ length: 9 }, (_, i) => i * 1000 - 4000);
    const x = tf.tensor(floats, [37]);
    const n = tf.tensor(ints, [3, 3], 'int32');
    const b = tf.tensor([1, 0, 1], [3], 'bool');
    expect(x.dataSync()).toEqual(floats);
    expect(await n.data()).toEqual(ints);
    expect(Array.from(b.dataSync())).toEqual([1, 0, 1]);
    expect(Array.from(backend.readSync(x.dataId, 5, 9))).toEqual(Array.from(floats.slice(5, 9)));
    expect(Array.from(backend.readSync(n.dataId, 2))).toEqual(Array.from(ints.slice(2)));
  });
});
