/**
 * Spindle's WGSL kernels (src/kernels/webgpu) against the cpu backend, on a real WebGPU device in Node
 * (Dawn on SwiftShader here and in CI: bench/lib/node-webgpu.ts): values and gradients of RMSNorm and
 * softmax, the fused Adam update against the tfjs-ops one, and the half-precision-weight matmul
 * against an f32 matmul of the same weights widened on the host. One row count above 65,535 checks
 * the programs' workgroup numbering when tfjs reshapes a dispatch past WebGPU's per-dimension limit.
 */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { useNodeWebGpu } from '../../bench/lib/node-webgpu.ts';
import { fusedAttention, rmsNorm, softmax } from '../../src/model/ops.ts';
import { packHalf } from '../../src/kernels/half.ts';
import { HALF_MATMUL_KERNEL, RMS_NORM_KERNEL, SOFTMAX_KERNEL } from '../../src/kernels/fused.ts';
import { adamUpdate, type AdamHyper } from '../../src/train/adam-update.ts';
import { Optimizer } from '../../src/train/optimizer.ts';
import { comparisonProblems, compareWithCpu } from '../../src/selftest/backend-compare.ts';
import { ByteTokenizer } from '../../src/tokenizer/byte-tokenizer.ts';
import { fromHalfBits, toHalfBits } from '../../src/kernels/half.ts';
import { loadHfModel, saveModel } from '../../src/hub/hf.ts';
import { crossEntropyLoss } from '../../src/model/logprobs.ts';
import { attachLora, detachLora, freezeLayers } from '../../src/model/lora.ts';
import { TransformerModel, type HostTensors } from '../../src/model/transformer.ts';
import { createRng } from '../../src/rng.ts';

type Arrays = Float32Array[];

/** Runs `f` on cpu and on webgpu over the same inputs; returns both outputs as arrays. */
async function onBoth(
  inputs: { shape: number[]; data: Float32Array }[],
  f: (xs: tf.Tensor[]) => tf.Tensor[],
): Promise<{ cpu: Arrays; gpu: Arrays }> {
  const run = async (backend: string) => {
    await tf.setBackend(backend);
    const xs = inputs.map((i) => tf.tensor(i.data, i.shape));
    const outs = tf.tidy(() => f(xs));
    const arrays = await Promise.all(outs.map(async (o) => new Float32Array(await o.data())));
    tf.dispose([...xs, ...outs]);
    return arrays;
  };
  return { cpu: await run('cpu'), gpu: await run('webgpu') };
}

function random(shape: number[], seed: number, scale = 1): { shape: number[]; data: Float32Array } {
  const rng = createRng(seed);
  const rand = () => rng.next();
  const n = shape.reduce((a, b) => a * b, 1);
  return { shape, data: Float32Array.from({ length: n }, () => (rand() * 2 - 1) * scale) };
}

function maxRelDiff(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let scale = 0;
  for (const v of b) scale = Math.max(scale, Math.abs(v));
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff = Math.max(diff, Math.abs(a[i] - b[i]));
  return diff / Math.max(scale, 1e-12);
}

function expectClose(r: { cpu: Arrays; gpu: Arrays }, tol = 2e-5): void {
  expect(r.gpu.length).toBe(r.cpu.length);
  r.gpu.forEach((g, i) => expect(maxRelDiff(g, r.cpu[i]), `output ${i}`).toBeLessThan(tol));
}

beforeAll(async () => {
  await useNodeWebGpu({ software: true });
});

describe('WebGPU kernels against cpu (SwiftShader in Node)', () => {
  it('the ops run the fused kernels on webgpu', async () => {
    await tf.setBackend('webgpu');
    const x = tf.randomNormal([4, 8]);
    const w = tf.ones([8]) as tf.Tensor1D;
    const info = await tf.profile(() => tf.grad((a: tf.Tensor) => tf.sum(softmax(rmsNorm(a, w, 1e-5))))(x));
    expect(info.kernelNames).toEqual(
      expect.arrayContaining([RMS_NORM_KERNEL, `${RMS_NORM_KERNEL}Dx`, SOFTMAX_KERNEL, `${SOFTMAX_KERNEL}Dx`]),
    );
    expect(info.kernelNames).not.toContain('Softmax');
    tf.dispose([x, w]);
  });

  it('RMSNorm: value and the gradients of x and the weight', async () => {
    const r = await onBoth([random([37, 96], 1), random([96], 2), random([37, 96], 3)], ([x, w, dy]) => {
      const { value, grads } = tf.valueAndGrads((a: tf.Tensor, b: tf.Tensor) =>
        tf.sum(tf.mul(rmsNorm(a, b as tf.Tensor1D, 1e-5), dy)),
      )([x, w]);
      return [rmsNorm(x, w as tf.Tensor1D, 1e-5), value, ...grads];
    });
    expectClose(r);
  });

  it('a row program past 65,535 rows (tfjs reshapes the dispatch; padding groups write nothing)', async () => {
    const r = await onBoth([random([65_600, 2], 14), random([2], 15)], ([x, w]) => [
      rmsNorm(x, w as tf.Tensor1D, 1e-5),
    ]);
    expectClose(r);
  });

  it('softmax over the last axis: value and gradient, masked entries included', async () => {
    const logits = random([3, 7, 130], 5, 6);
    for (let i = 0; i < logits.data.length; i += 3) logits.data[i] = -1e9;
    const dy = random(logits.shape, 6);
    const r = await onBoth([logits, dy], ([x, g]) => {
      const { value, grads } = tf.valueAndGrads((a: tf.Tensor) => tf.sum(tf.mul(softmax(a), g)))([x]);
      return [softmax(x), value, ...grads];
    });
    expectClose(r);
  });

  it('the fused Adam and AdamW update equals the tfjs-ops one', async () => {
    const base = { lr: 3e-3, b1: 0.9, b2: 0.999, eps: 1e-8, bc1: 1 - 0.9 ** 3, bc2: 1 - 0.999 ** 3, gradScale: 0.5 };
    for (const h of [
      { ...base, kind: 'adamw', wd: 0.1 },
      { ...base, kind: 'adam', wd: 0.01 },
      { ...base, kind: 'adam', wd: 0 },
    ] as AdamHyper[]) {
      const v = random([5000], 10);
      v.data.forEach((x, i) => (v.data[i] = Math.abs(x) * 1e-3));
      const r = await onBoth([random([5000], 7), random([5000], 8), random([5000], 9, 0.1), v], ([p, g, m, s]) => {
        const next = adamUpdate(p, g, m, s, h);
        return [next.p, next.m, next.v];
      });
      expectClose(r, 1e-5);
    }
  });

  it('an optimizer step over more variables than one shader binds (21) matches cpu: gradient norm and update', async () => {
    const inputs = Array.from({ length: 42 }, (_, i) => random([3 + ((i % 21) % 4), 5], 30 + i)); // 21 weights, then their gradients
    const step = async (backend: string) => {
      await tf.setBackend(backend);
      const vars = inputs.slice(0, 21).map((x) => tf.variable(tf.tensor(x.data, x.shape)));
      const optimizer = new Optimizer(vars, {
        kind: 'adamw',
        learningRate: 1e-2,
        warmupSteps: 0,
        weightDecay: 0.1,
        gradClip: 0.5,
      });
      const grads = inputs.slice(21).map((g) => tf.tensor(g.data, g.shape));
      optimizer.accumulate(grads);
      const { gradNorm } = await optimizer.step();
      const values = await Promise.all(vars.map(async (v) => new Float32Array(await v.data())));
      tf.dispose([...vars, ...grads]);
      optimizer.dispose();
      return { gradNorm, values };
    };
    const cpu = await step('cpu');
    const gpu = await step('webgpu');
    expect(Math.abs(gpu.gradNorm - cpu.gradNorm) / cpu.gradNorm).toBeLessThan(1e-5);
    expectClose({ cpu: cpu.values, gpu: gpu.values }, 1e-5);
  });

  it('fused attention for generation: softmax(q·kᵀ·scale + bias)·v, with no mask, a causal mask and per-row padding masks', async () => {
    const [B, G, rep] = [2, 2, 2];
    const cases = [
      { T: 1, Tk: 5, D: 8, mask: 'none' },
      { T: 3, Tk: 7, D: 8, mask: 'causal' }, // 4 cached positions, then 3 new ones
      { T: 1, Tk: 130, D: 70, mask: 'rows' }, // more keys and head dims than a workgroup has threads
    ] as const;
    for (const { T, Tk, D, mask } of cases) {
      const bias =
        mask === 'none'
          ? null
          : mask === 'causal'
            ? {
                shape: [T, Tk],
                data: Float32Array.from({ length: T * Tk }, (_, i) =>
                  i % Tk > Tk - T + Math.floor(i / Tk) ? -1e9 : 0,
                ),
              }
            : {
                shape: [B, 1, 1, T, Tk],
                data: Float32Array.from({ length: B * T * Tk }, (_, i) => (i % 7 === 3 ? -1e9 : 0)),
              };
      const inputs = [
        random([B, G, rep * T, D], 40),
        random([B, G, Tk, D], 41),
        random([B, G, Tk, D], 42),
        ...(bias ? [bias] : []),
      ];
      const scale = 1 / Math.sqrt(D);
      const r = await onBoth(inputs, ([q, k, v, b]) => {
        if (tf.getBackend() === 'webgpu') return [fusedAttention(q, k, v, b ?? null, scale, T)!];
        const scores = tf.mul(tf.matMul(q, k, false, true), scale);
        const masked = b ? tf.add(scores.reshape([B, G, rep, T, Tk]), b).reshape([B, G, rep * T, Tk]) : scores;
        return [tf.matMul(tf.softmax(masked), v)];
      });
      expectClose(r);
    }
  });

  it('x · W with W kept as packed f16 / bf16: value and the gradient of x', async () => {
    const [M, K, N] = [19, 40, 34];
    const rng = createRng(11);
    const rand = () => rng.next();
    const halves = { f16: new Uint16Array(K * N), bf16: new Uint16Array(K * N) };
    const widened = { f16: new Float32Array(K * N), bf16: new Float32Array(K * N) };
    const f32 = new Float32Array(1);
    const bits = new Uint32Array(f32.buffer);
    for (let i = 0; i < K * N; i++) {
      f32[0] = rand() * 2 - 1;
      halves.bf16[i] = bits[0] >>> 16;
      bits[0] = halves.bf16[i] << 16;
      widened.bf16[i] = f32[0];
      halves.f16[i] = toHalf(widened.bf16[i]);
      widened.f16[i] = fromHalf(halves.f16[i]);
    }
    const x = random([M, K], 12);
    const dy = random([M, N], 13);
    for (const format of ['f16', 'bf16'] as const) {
      await tf.setBackend('cpu');
      const ref = tf.tidy(() => {
        const [a, w, g] = [
          tf.tensor(x.data, x.shape),
          tf.tensor2d(widened[format], [K, N]),
          tf.tensor(dy.data, dy.shape),
        ];
        const { value, grads } = tf.valueAndGrads((t: tf.Tensor) => tf.sum(tf.mul(tf.matMul(t, w), g)))([a]);
        return [tf.matMul(a, w), value, grads[0]];
      });
      const cpu = await Promise.all(ref.map(async (t) => new Float32Array(await t.data())));
      await tf.setBackend('webgpu');
      const out = tf.tidy(() => {
        const [a, w, g] = [tf.tensor(x.data, x.shape), packHalf(halves[format], K, N), tf.tensor(dy.data, dy.shape)];
        const product = (t: tf.Tensor) =>
          tf.engine().runKernel(HALF_MATMUL_KERNEL, { a: t, w }, { format, transposeW: false }) as tf.Tensor;
        const { value, grads } = tf.valueAndGrads((t: tf.Tensor) => tf.sum(tf.mul(product(t), g)))([a]);
        return [product(a), value, grads[0]];
      });
      const gpu = await Promise.all(out.map(async (t) => new Float32Array(await t.data())));
      expectClose({ cpu, gpu });
    }
  });
});

/** IEEE half from f32, round to nearest (normal range; the test's values are in [-1, 1]). */
function toHalf(v: number): number {
  const f = new Float32Array([v]);
  const u = new Uint32Array(f.buffer)[0];
  const sign = (u >>> 16) & 0x8000;
  const exp = ((u >>> 23) & 0xff) - 127 + 15;
  if (exp <= 0) return sign;
  const mant = u & 0x7fffff;
  let h = sign | (exp << 10) | (mant >>> 13);
  if ((mant & 0x1fff) > 0x1000 || ((mant & 0x1fff) === 0x1000 && h & 1)) h++;
  return h;
}

function fromHalf(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  return exp === 0 ? sign * mant * 2 ** -24 : sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

describe('the transformer on WebGPU with these kernels against cpu (SwiftShader in Node)', () => {
  // On SwiftShader; a loaded 2-core machine has taken over 60 s.
  it('logits, loss, full and LoRA gradients and greedy tokens agree', { timeout: 240_000 }, async () => {
    expect(comparisonProblems(await compareWithCpu('webgpu'))).toEqual([]);
  });
});

describe('a bf16 checkpoint on WebGPU keeps its projections in 16 bits', () => {
  const config = {
    vocabSize: 266,
    hiddenSize: 16,
    intermediateSize: 24,
    numLayers: 2,
    numHeads: 4,
    numKvHeads: 2,
    headDim: 4,
    maxPositions: 32,
    ropeTheta: 10000,
    rmsNormEps: 1e-5,
    tieWordEmbeddings: true,
    attentionBias: true,
    family: 'qwen2' as const,
  };
  const tokens = [
    [1, 5, 9, 2, 7, 3],
    [6, 6, 1, 0, 2, 9],
  ];

  /** The files of a model whose weights are bf16 values, with config.json declaring bfloat16. */
  async function bf16Checkpoint(): Promise<{ files: Record<string, Blob>; weights: HostTensors }> {
    await tf.setBackend('cpu');
    const built = TransformerModel.create(config, 4);
    const weights: HostTensors = new Map();
    for (const [name, t] of await built.getWeights())
      weights.set(name, { shape: t.shape, data: fromHalfBits(toHalfBits(t.data, 'bf16'), 'bf16') });
    built.setWeights(weights);
    const files = await saveModel(built, new ByteTokenizer());
    built.dispose();
    const hf = JSON.parse(new TextDecoder().decode(files.get('config.json')));
    files.set('config.json', new TextEncoder().encode(JSON.stringify({ ...hf, torch_dtype: 'bfloat16' })));
    return {
      files: Object.fromEntries(
        [...files].map(([name, bytes]) => [name, new Blob([bytes as Uint8Array<ArrayBuffer>])]),
      ),
      weights,
    };
  }

  it('same logits and LoRA gradients as float32, fewer bytes, exact weights back, widened for full fine-tuning', async () => {
    const { files, weights } = await bf16Checkpoint();
    await tf.setBackend('webgpu');
    const run = async (precision: 'auto' | 'float32') => {
      const before = tf.memory().numBytes;
      const loaded = await loadHfModel(files, { precision });
      const bytes = tf.memory().numBytes - before;
      const logits = new Float32Array(await tf.tidy(() => loaded.model.forward(tokens).logits).data());
      attachLora(loaded.model, { r: 2, alpha: 4, dropout: 0, targetModules: ['q_proj', 'down_proj'], seed: 3 });
      const vars = loaded.model.trainableVariables();
      for (const v of vars) v.assign(tf.randomNormal(v.shape, 0, 0.3, 'float32', 7));
      const { grads } = tf.variableGrads(() => crossEntropyLoss(loaded.model, tokens), vars);
      const loraGrads = await Promise.all(vars.map(async (v) => new Float32Array(await grads[v.name].data())));
      tf.dispose(grads);
      detachLora(loaded.model);
      return { loaded, bytes, logits, loraGrads };
    };
    const half = await run('auto');
    const full = await run('float32');
    expect(half.loaded.linearPrecision).toBe('bf16');
    expect(full.loaded.linearPrecision).toBe('float32');
    expectClose({ cpu: [full.logits, ...full.loraGrads], gpu: [half.logits, ...half.loraGrads] }, 1e-4);
    // The projections are 2 of the model's bytes per weight instead of 4.
    const linears = config.numLayers * (16 * 4 * (2 * 4 + 2 * 2) + 3 * 16 * 24);
    expect(full.bytes - half.bytes).toBe(linears * 2);
    const back = await half.loaded.model.getWeights();
    for (const [name, t] of weights) expect(Array.from(back.get(name)!.data), name).toEqual(Array.from(t.data));
    // Full fine-tuning widens the trained layers' projections; the model computes the same.
    expect(() => half.loaded.model.trainableVariables()).toThrow(/half precision/);
    freezeLayers(half.loaded.model, '0');
    expect(half.loaded.model.layers[0].q_proj.half).not.toBeNull();
    expect(half.loaded.model.layers[1].q_proj.weight).not.toBeNull();
    const widened = new Float32Array(await tf.tidy(() => half.loaded.model.forward(tokens).logits).data());
    expectClose({ cpu: [full.logits], gpu: [widened] }, 1e-4);
    half.loaded.model.dispose();
    full.loaded.model.dispose();
  });
});
