/**
 * The decoding step as one kernel on tfjs-wasm (src/kernels/wasm-decode.ts) against the model's own
 * graph: the last position of a full forward pass of the same sequence, and the key/value cache that
 * pass builds. Batch 1 (the heap gemv) and a left-padded batch (XNNPACK, masked keys), biases, Qwen3's
 * head norms, an untied head and LoRA adapters; then that the step is one kernel and that a failing
 * step leaves nothing on the heap.
 */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { presetConfig, type ModelConfig } from '../../src/model/config.ts';
import { DECODE_STEP_KERNEL } from '../../src/kernels/fused.ts';
import { attachLora } from '../../src/model/lora.ts';
import { TransformerModel, type KVCache } from '../../src/model/transformer.ts';
import { createRng } from '../../src/rng.ts';
import { generate } from '../../src/model/sampling.ts';
import { heapKernelsOf, type TfjsWasmBackend } from '../../src/kernels/wasm-simd/heap-kernels.ts';
import { packedWeightsOf } from '../../src/kernels/wasm-simd/packed-weights.ts';
import { expectClose, useBackend } from '../model/helpers.ts';

interface Batch {
  ids: number[][];
  keyValid: boolean[][];
  positions: number[][];
}

/** Rows of `length` tokens, row b left-padded with `pads[b]` pad tokens. */
function batch(pads: number[], length: number, vocab: number): Batch {
  const rng = createRng(7);
  return {
    ids: pads.map((p) => Array.from({ length }, (_, t) => (t < p ? 0 : Math.floor(rng.next() * vocab)))),
    keyValid: pads.map((p) => Array.from({ length }, (_, t) => t >= p)),
    positions: pads.map((p) => Array.from({ length }, (_, t) => Math.max(0, t - p))),
  };
}

const upTo = (b: Batch, n: number): Batch => ({
  ids: b.ids.map((r) => r.slice(0, n)),
  keyValid: b.keyValid.map((r) => r.slice(0, n)),
  positions: b.positions.map((r) => r.slice(0, n)),
});
const last = (b: Batch): Batch => ({
  ids: b.ids.map((r) => r.slice(-1)),
  keyValid: b.keyValid,
  positions: b.positions.map((r) => r.slice(-1)),
});

/** The step's logits and cache next to the full pass's, on the valid (unpadded) positions. */
function compareStep(model: TransformerModel, b: Batch, what: string): void {
  const T = b.ids[0].length;
  const V = model.config.vocabSize;
  const prefix = model.forward(upTo(b, T - 1).ids, { ...upTo(b, T - 1), cache: model.emptyCache(), lastOnly: true });
  const step = tf.tidy(() => {
    const r = model.forward(last(b).ids, { ...last(b), cache: prefix.cache, lastOnly: true });
    return { logits: r.logits, k: r.cache!.k, v: r.cache!.v } as unknown as tf.TensorContainerObject;
  }) as unknown as { logits: tf.Tensor; k: tf.Tensor[]; v: tf.Tensor[] };
  const full = model.forward(b.ids, { keyValid: b.keyValid, positions: b.positions, cache: model.emptyCache() });
  const fullLast = full.logits.slice([0, T - 1, 0], [b.ids.length, 1, V]);
  expectClose(step.logits.dataSync(), fullLast.dataSync(), `${what}: logits`, 1e-5, 1e-5);
  model.layers.forEach((_, i) => {
    for (const [name, got, want] of [
      ['keys', step.k[i], full.cache!.k[i]],
      ['values', step.v[i], full.cache!.v[i]],
    ] as const) {
      expect(got.shape[2], `${what}: layer ${i} ${name} capacity`).toBeGreaterThanOrEqual(T);
      const filled = got.slice([0, 0, 0, 0], [-1, -1, T, -1]);
      expect(filled.shape, `${what}: layer ${i} ${name} shape`).toEqual(want.shape);
      const [g, w] = [filled.arraySync() as number[][][][], want.arraySync() as number[][][][]];
      filled.dispose();
      b.keyValid.forEach((valid, row) => {
        const at = valid.flatMap((ok, t) => (ok ? [t] : []));
        const pick = (x: number[][][][]) => x[row].flatMap((head) => at.flatMap((t) => head[t]));
        expectClose(pick(g), pick(w), `${what}: layer ${i} ${name}, row ${row}`, 1e-5, 1e-5);
      });
    }
  });
  for (const t of [
    prefix.logits,
    ...prefix.cache!.k,
    ...prefix.cache!.v,
    step.logits,
    ...step.k,
    ...step.v,
    full.logits,
    ...full.cache!.k,
    ...full.cache!.v,
    fullLast,
  ])
    t.dispose();
}

/** A fresh model; its biases (zeros when created) and norm weights (ones) made random, so each one counts. */
function model(over: Partial<ModelConfig>, seed = 3): TransformerModel {
  const m = TransformerModel.create(presetConfig('nano', 266, over), seed);
  const rng = createRng(seed + 100);
  for (const p of m.namedParameters()) {
    if (p.variable && /(bias|norm\.weight)$/.test(p.name))
      p.variable.assign(
        tf.tensor(
          Float32Array.from({ length: p.variable.size }, () => 1 + rng.normal() * 0.1),
          p.variable.shape,
        ),
      );
  }
  return m;
}

describe('the decoding step as one wasm kernel', () => {
  beforeAll(async () => {
    await useBackend('wasm');
  });

  it('is registered, and a decoding step runs it alone', async () => {
    expect(tf.getKernel(DECODE_STEP_KERNEL, 'wasm')).toBeDefined();
    const m = model({});
    const prefix = m.forward([[5, 6, 7]], { cache: m.emptyCache(), lastOnly: true });
    const info = await tf.profile(() => m.forward([[8]], { cache: prefix.cache, lastOnly: true }).logits);
    const kernels = info.kernels.map((k) => k.name);
    expect(kernels).toContain(DECODE_STEP_KERNEL);
    expect(kernels.length, kernels.join(', ')).toBeLessThanOrEqual(3);
    m.dispose();
  });

  const cases: [string, Partial<ModelConfig>, number[]][] = [
    ['Llama, batch 1', {}, [0]],
    ['Llama, a left-padded batch of 3', {}, [0, 2, 5]],
    [
      'biases on every projection, untied head',
      { attentionBias: true, outputBias: true, mlpBias: true, tieWordEmbeddings: false },
      [0, 3],
    ],
    ['Qwen3 head norms', { family: 'qwen3', qkNorm: true }, [1]],
  ];
  for (const [what, over, pads] of cases) {
    it(`matches the full forward pass: ${what}`, () => {
      const m = model(over);
      compareStep(m, batch(pads, 9, 266), what);
      m.dispose();
    });
  }

  it('applies LoRA adapters when enabled and not when disabled', () => {
    const m = model({});
    attachLora(m, {
      r: 4,
      alpha: 8,
      dropout: 0,
      targetModules: ['q_proj', 'v_proj', 'gate_proj', 'down_proj'],
      freezeLayers: null,
      seed: 1,
    });
    const rng = createRng(11);
    for (const layer of m.layers) {
      for (const l of [layer.q_proj, layer.v_proj, layer.gate_proj, layer.down_proj])
        l.lora!.B.assign(
          tf.tensor(
            Float32Array.from({ length: l.lora!.B.size }, () => rng.normal() * 0.05),
            l.lora!.B.shape,
          ),
        );
    }
    for (const enabled of [true, false]) {
      m.loraEnabled = enabled;
      compareStep(m, batch([0, 2], 7, 266), `LoRA ${enabled ? 'enabled' : 'disabled'}`);
    }
    m.dispose();
  });

  it('appends to its cache in place while the capacity lasts, never over a position a fork already wrote', () => {
    const m = model({});
    const sequence = [5, 9, 33, 200, 17, 4];
    const prefix = m.forward([sequence.slice(0, 3)], { cache: m.emptyCache(), lastOnly: true });
    const step = (cache: KVCache, token: number) => m.forward([[token]], { cache, lastOnly: true });
    const first = step(prefix.cache!, sequence[3]); // the prefill's exact cache: copied, with room to spare
    expect(first.cache!.k[0].shape[2]).toBeGreaterThan(first.cache!.length);
    const second = step(first.cache!, sequence[4]);
    expect(second.cache!.k[0].dataId, 'in place').toBe(first.cache!.k[0].dataId);
    const fork = step(first.cache!, 77); // from the same cache as `second`: must not overwrite its position 4
    expect(fork.cache!.k[0].dataId, 'a fork is copied').not.toBe(first.cache!.k[0].dataId);
    const third = step(second.cache!, sequence[5]);
    const full = tf.tidy(() => m.forward([sequence]).logits.slice([0, 5, 0], [1, 1, -1]));
    expectClose(third.logits.dataSync(), full.dataSync(), 'the step after a fork', 1e-5, 1e-5);
    // A graph forward of several tokens reads such a cache up to its length only.
    const graph = m.forward([[sequence[5], 6]], { cache: second.cache!, lastOnly: false });
    const fullTwo = tf.tidy(() => m.forward([[...sequence, 6]]).logits.slice([0, 5, 0], [1, 2, -1]));
    expectClose(graph.logits.dataSync(), fullTwo.dataSync(), 'a graph forward on a cache with room', 1e-5, 1e-5);
    m.dispose();
  });

  it('grows its cache to the reserve it is given, once, with the same logits', () => {
    const m = model({});
    const prefix = m.forward([[5, 9, 33]], { cache: m.emptyCache(), lastOnly: true });
    const plain = m.forward([[200]], { cache: prefix.cache!, lastOnly: true });
    const reserved = m.forward([[200]], { cache: { ...prefix.cache!, reserve: 300 }, lastOnly: true });
    expect(plain.cache!.k[0].shape[2]).toBeLessThan(300);
    expect(reserved.cache!.k[0].shape[2]).toBe(300);
    expect(Array.from(reserved.logits.dataSync())).toEqual(Array.from(plain.logits.dataSync()));
    m.dispose();
  });

  it('packs each weight once, packs it again after an assign (an optimizer step), and frees the copies with the weights', () => {
    const backend = tf.backend() as unknown as TfjsWasmBackend;
    const packed = packedWeightsOf(backend, heapKernelsOf(backend.wasm));
    const before = packed.size;
    const m = model({});
    const decodeOnce = () => {
      const prefix = m.forward([[5, 6]], { cache: m.emptyCache(), lastOnly: true });
      const step = m.forward([[7]], { cache: prefix.cache, lastOnly: true });
      for (const t of [
        prefix.logits,
        step.logits,
        ...prefix.cache!.k,
        ...prefix.cache!.v,
        ...step.cache!.k,
        ...step.cache!.v,
      ])
        t.dispose();
    };
    const perModel = m.config.numLayers * 7 + 1; // seven projections a layer, and the (tied) head
    decodeOnce();
    decodeOnce();
    expect(packed.size - before).toBe(perModel);
    const w = m.layers[1].gate_proj.weight!;
    const changed = tf.tidy(() => tf.mul(w, -2));
    w.assign(changed);
    changed.dispose();
    compareStep(m, batch([0], 6, 266), 'after the weight changed'); // a stale copy would give the old logits
    decodeOnce();
    expect(packed.size - before, 'the old copy was freed with the old buffer').toBe(perModel);
    m.dispose();
    expect(packed.size).toBe(before);
  });

  it('gives generation the same tokens as recomputing every step', async () => {
    const m = model({}, 5);
    const prompts = [
      [256, 10, 20, 30],
      [256, 40],
    ];
    const cached = await generate(m, prompts, { maxNewTokens: 24, temperature: 0, seed: 1, useCache: true });
    const recomputed = await generate(m, prompts, { maxNewTokens: 24, temperature: 0, seed: 1, useCache: false });
    expect(cached.tokens).toEqual(recomputed.tokens);
    cached.logprobs.flat().forEach((lp, i) => expect(lp).toBeCloseTo(recomputed.logprobs.flat()[i], 4));
    m.dispose();
  });

  it('refuses a token id outside the vocabulary by name, and leaves no tensor or heap buffer behind', () => {
    const m = model({});
    const prefix = m.forward([[5, 6]], { cache: m.emptyCache(), lastOnly: true });
    const backend = tf.backend() as unknown as { numDataIds(): number };
    const [tensors, buffers] = [tf.memory().numTensors, backend.numDataIds()];
    expect(() => tf.tidy(() => m.forward([[400]], { cache: prefix.cache, lastOnly: true }).logits)).toThrow(
      /token id 400 is outside the model's vocabulary of 266/,
    );
    expect(tf.memory().numTensors).toBe(tensors);
    expect(backend.numDataIds()).toBe(buffers);
    m.dispose();
  });
});
