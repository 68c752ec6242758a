/**
 * Turn caches (sampling.ts `past` / `keepCaches`): a multi-turn episode's next turn prefills only what is
 * new. Against a fresh prefill of the whole conversation: the same tokens on fixed seeds, log-probs within
 * 1e-5 (the cached keys of sampled tokens come from the decoding step, which rounds differently from a
 * prefill); against itself batched: bit for bit, as fresh prefills are (batch-invariance.test.ts). No
 * tensor outlives the caches' disposal.
 */
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { presetConfig } from '../../src/model/config.ts';
import { attachLora } from '../../src/model/lora.ts';
import { disposeTurnCache, generate, turnCacheBytes, type TurnCache } from '../../src/model/sampling.ts';
import { TurnCacheStore } from '../../src/model/turn-cache.ts';
import { TransformerModel } from '../../src/model/transformer.ts';
import { createRng, type Rng } from '../../src/rng.ts';
import { useBackend } from './helpers.ts';

let model: TransformerModel;
beforeAll(async () => {
  await useBackend('wasm');
  model = TransformerModel.create({ ...presetConfig('nano', 266), numLayers: 2 }, 5);
  attachLora(model, {
    r: 4,
    alpha: 8,
    dropout: 0,
    targetModules: ['q_proj', 'v_proj', 'gate_proj', 'down_proj'],
    freezeLayers: null,
    seed: 1,
  });
  const rng = createRng(3);
  for (const layer of model.layers) {
    for (const l of [layer.q_proj, layer.v_proj, layer.gate_proj, layer.down_proj])
      l.lora!.B.assign(
        tf.tensor(
          Float32Array.from({ length: l.lora!.B.size }, () => rng.normal() * 0.05),
          l.lora!.B.shape,
        ),
      );
  }
});
afterAll(() => model.dispose());

const randomTokens = (rng: Rng, n: number) => Array.from({ length: n }, () => rng.int(2, 255));
/** Token 1 stops a row: with 1/266 odds per token rows end at different turns and lengths. */
const SAMPLING = { maxNewTokens: 10, temperature: 1, seed: 0, stopTokens: [1, 7, 9] };
const TOLERANCE = 1e-5;

interface Conversation {
  prompt: number[];
  cache: TurnCache | null;
  ended: boolean;
}

/**
 * `n` episodes of up to `turns` turns, batched together: each turn samples with and without the turn
 * caches from the same seeds, checks the two agree, and appends the sampled tokens and a random
 * "observation" to the conversation. A row whose turn stopped on token 7 ends (episodes end at different turns).
 */
async function compareEpisodes(n: number, turns: number, seed: number): Promise<{ compared: number }> {
  const rng = createRng(seed);
  const conversations: Conversation[] = Array.from({ length: n }, (_, i) => ({
    prompt: randomTokens(rng, 5 + ((i * 13) % 40)),
    cache: null,
    ended: false,
  }));
  let compared = 0;
  for (let turn = 0; turn < turns; turn++) {
    const live = conversations.filter((c) => !c.ended);
    if (live.length === 0) break;
    const rowSeeds = live.map((_, i) => 1000 * seed + 10 * turn + i);
    const prompts = live.map((c) => c.prompt);
    const fresh = await generate(model, prompts, { ...SAMPLING, rowSeeds });
    const reused = await generate(model, prompts, {
      ...SAMPLING,
      rowSeeds,
      past: live.map((c) => c.cache),
      keepCaches: true,
    });
    live.forEach((c, i) => {
      expect(reused.tokens[i], `turn ${turn} row ${i}`).toEqual(fresh.tokens[i]);
      const worst = Math.max(...reused.logprobs[i].map((lp, t) => Math.abs(lp - fresh.logprobs[i][t])));
      expect(worst, `turn ${turn} row ${i}`).toBeLessThanOrEqual(TOLERANCE);
      compared += reused.tokens[i].length;
      disposeTurnCache(c.cache);
      c.cache = reused.caches![i];
      expect(c.cache!.tokens).toEqual([...c.prompt, ...reused.tokens[i].slice(0, -1)]);
      c.prompt = [...c.prompt, ...reused.tokens[i], ...randomTokens(rng, 3 + ((turn + i) % 9))];
      if (reused.tokens[i].at(-1) === 7) c.ended = true;
    });
  }
  for (const c of conversations) disposeTurnCache(c.cache);
  return { compared };
}

describe('turn caches', () => {
  it('sample the tokens a fresh prefill samples, log-probs within 1e-5, and leak no tensors', async () => {
    await generate(model, [[1, 2, 3]], SAMPLING); // the model's kept tensors (the tied head) exist from here
    const before = tf.memory().numTensors;
    let compared = 0;
    for (const [n, seed] of [
      [1, 1],
      [3, 2],
      [8, 3],
    ])
      compared += (await compareEpisodes(n, 6, seed)).compared;
    expect(compared).toBeGreaterThan(300);
    expect(tf.memory().numTensors).toBe(before);
  }, 120_000);

  it('give a row the same floats alone and batched with rows of other lengths and caches', async () => {
    const rng = createRng(21);
    const first = Array.from({ length: 6 }, (_, i) => randomTokens(rng, 4 + ((i * 17) % 37)));
    const turn1 = await generate(model, first, { ...SAMPLING, rowSeeds: first.map((_, i) => i), keepCaches: true });
    // Row 5 comes back without a cache (a first turn beside later ones).
    const caches = turn1.caches!.map((c, i) => (i === 5 ? null : c));
    const prompts = first.map((p, i) => [...p, ...turn1.tokens[i], ...randomTokens(rng, 2 + i * 5)]);
    const rowSeeds = prompts.map((_, i) => 50 + i);
    const batched = await generate(model, prompts, { ...SAMPLING, rowSeeds, past: caches });
    for (let i = 0; i < prompts.length; i++) {
      const alone = await generate(model, [prompts[i]], { ...SAMPLING, rowSeeds: [rowSeeds[i]], past: [caches[i]] });
      expect(batched.tokens[i], `row ${i}`).toEqual(alone.tokens[0]);
      expect(batched.logprobs[i], `row ${i}`).toEqual(alone.logprobs[0]);
    }
    // A prefill in bunches of rows (a small score budget) lays each bunch's caches out alike.
    const bunched = await generate(model, prompts, { ...SAMPLING, rowSeeds, past: caches, prefillScoreFloats: 20_000 });
    expect(bunched.tokens).toEqual(batched.tokens);
    expect(bunched.logprobs).toEqual(batched.logprobs);
    turn1.caches!.forEach(disposeTurnCache);
  }, 60_000);

  it('refuse a cache that does not begin the prompt', async () => {
    const turn1 = await generate(model, [[5, 6, 7, 8]], { ...SAMPLING, keepCaches: true });
    const cache = turn1.caches![0]!;
    await expect(generate(model, [[5, 6, 9, 9, 9, 9, 9]], { ...SAMPLING, past: [cache] })).rejects.toThrow(
      /not a proper prefix/,
    );
    await expect(generate(model, [cache.tokens], { ...SAMPLING, past: [cache] })).rejects.toThrow(/proper prefix/);
    disposeTurnCache(cache);
  });

  it('work on an int8 base, which decodes without the one-kernel step', async () => {
    const int8 = TransformerModel.create({ ...presetConfig('nano', 266), numLayers: 2 }, 6, 'int8');
    const rng = createRng(8);
    const first = [randomTokens(rng, 30), randomTokens(rng, 11)];
    const turn1 = await generate(int8, first, { ...SAMPLING, rowSeeds: [1, 2], keepCaches: true });
    const prompts = first.map((p, i) => [...p, ...turn1.tokens[i], ...randomTokens(rng, 6)]);
    const fresh = await generate(int8, prompts, { ...SAMPLING, rowSeeds: [3, 4] });
    const reused = await generate(int8, prompts, { ...SAMPLING, rowSeeds: [3, 4], past: turn1.caches });
    expect(reused.tokens).toEqual(fresh.tokens);
    reused.logprobs.forEach((row, i) =>
      row.forEach((lp, t) => expect(Math.abs(lp - fresh.logprobs[i][t])).toBeLessThanOrEqual(TOLERANCE)),
    );
    turn1.caches!.forEach(disposeTurnCache);
    int8.dispose();
  });

  it('run a conversation to the end of the context as a fresh prefill does', async () => {
    const small = TransformerModel.create({ ...presetConfig('nano', 266), numLayers: 2, maxPositions: 64 }, 9);
    const rng = createRng(4);
    let prompt = randomTokens(rng, 20);
    let cache: TurnCache | null = null;
    const options = { maxNewTokens: 12, temperature: 1, seed: 0 };
    for (let turn = 0; prompt.length < 64; turn++) {
      const fresh = await generate(small, [prompt], { ...options, rowSeeds: [turn] });
      const reused = await generate(small, [prompt], { ...options, rowSeeds: [turn], past: [cache], keepCaches: true });
      expect(reused.tokens).toEqual(fresh.tokens);
      expect(reused.tokens[0].length).toBe(Math.min(12, 64 - prompt.length));
      disposeTurnCache(cache);
      cache = reused.caches![0];
      prompt = [...prompt, ...reused.tokens[0], ...randomTokens(rng, 5)].slice(0, 64);
    }
    disposeTurnCache(cache);
    small.dispose();
  });
});

describe('TurnCacheStore', () => {
  const keep = async (prompt: number[]) =>
    (await generate(model, [prompt], { ...SAMPLING, stopTokens: [], keepCaches: true })).caches![0]!;

  it('hands a cache back only for a prompt it begins and the weights it was made with', async () => {
    const before = tf.memory().numTensors;
    const store = new TurnCacheStore(2 ** 30);
    const cache = await keep([3, 4, 5]);
    store.put('a', cache, model, true);
    const next = [...cache.tokens, 9, 9];
    expect(store.lookup('a', next, model, true)).toBe(cache);
    expect(store.lookup('b', next, model, true)).toBeNull();
    expect(store.lookup('a', next, model, false)).toBeNull(); // LoRA off: another policy; the entry is dropped
    expect(store.stats).toEqual({ hits: 1, stale: 1 });
    store.put('a', await keep([3, 4, 5]), model, true);
    expect(store.lookup('a', [3, 4, 6, 7, 8, 9, 9, 9, 9, 9, 9, 9, 9], model, true)).toBeNull();
    store.put('a', await keep([3, 4, 5]), model, true);
    const B = model.layers[0].q_proj.lora!.B;
    tf.tidy(() => B.assign(tf.add(B, 0))); // as an optimizer step assigns new values
    expect(store.lookup('a', next, model, true)).toBeNull();
    expect(store.size).toBe(0);
    expect(tf.memory().numTensors).toBe(before);
  });

  it('releases the least recently stored past its budget, and everything on clear', async () => {
    const before = tf.memory().numTensors;
    const first = await keep([1, 2, 3]);
    const store = new TurnCacheStore(2.5 * turnCacheBytes(first));
    store.put('a', first, model, true);
    store.put('b', await keep([1, 2, 4]), model, true);
    const last = await keep([1, 2, 5]);
    store.put('c', last, model, true);
    expect(store.size).toBeLessThan(3);
    expect(store.lookup('a', [...first.tokens, 1], model, true)).toBeNull();
    expect(store.lookup('c', [...last.tokens, 0], model, true)).toBe(last);
    store.clear();
    expect(store.size).toBe(0);
    expect(store.bytes).toBe(0);
    expect(tf.memory().numTensors).toBe(before);
  });
});
