import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ByteTokenizer } from '../../src/tokenizer/byte-tokenizer.ts';
import { initBackend } from '../../src/kernels/backend.ts';
import { TransformerModel } from '../../src/model/transformer.ts';
import { GenerationService, lengthBuckets } from '../../src/pipeline/engine/generation.ts';
import { TINY_MODEL } from './tiny-model.ts';

describe('GenerationService while its run is paused', () => {
  let model: TransformerModel;
  beforeAll(async () => {
    await initBackend({ forced: 'wasm' });
    model = TransformerModel.create(TINY_MODEL, 4);
  });
  afterAll(() => model.dispose());

  it('samples nothing while held, then answers the waiting request once released', async () => {
    let release!: () => void;
    let hold: Promise<void> | null = new Promise<void>((r) => (release = r));
    // The batch asks whether it is held once it has its requests; the test looks right after that moment.
    let asked!: () => void;
    const heldAsked = new Promise<void>((r) => (asked = r));
    let modelUsed = 0;
    const service = new GenerationService(
      () => (modelUsed++, model),
      new ByteTokenizer(),
      undefined,
      () => (asked(), hold),
    );
    let answered = false;
    const turn = service
      .generate({ tokens: [1, 2, 3], sampling: { temperature: 1, top_k: 0, top_p: 1, max_new_tokens: 4 }, seed: 7 })
      .then((t) => {
        answered = true;
        return t;
      });
    await heldAsked;
    // A batch that went on past the hold would have read the model by the time the event loop turns.
    await new Promise((r) => setImmediate(r));
    expect(modelUsed).toBe(0);
    expect(answered).toBe(false);
    expect(service.stats.batches).toBe(0);
    hold = null;
    release();
    expect((await turn).tokens.length).toBeGreaterThan(0);
    expect(service.stats.batches).toBe(1);
  });
});

describe('GenerationService near the end of the context', () => {
  let model: TransformerModel;
  beforeAll(async () => {
    await initBackend({ forced: 'wasm' });
    model = TransformerModel.create(TINY_MODEL, 5);
  });
  afterAll(() => model.dispose());

  const sampling = { temperature: 1, top_k: 0, top_p: 1, max_new_tokens: 6 };
  const ask = (service: GenerationService, tokens: number[], seed: number) =>
    service.generate({ tokens, sampling, seed });

  it('gives each request the tokens it gets alone, whatever long conversation shares its batch, and ends a full one', async () => {
    const P = model.config.maxPositions;
    const short = [1, 2, 3];
    const nearEnd = Array.from({ length: P - 2 }, (_, i) => 1 + (i % 50));
    const full = Array.from({ length: P }, (_, i) => 1 + (i % 50));
    const alone = await ask(
      new GenerationService(() => model, new ByteTokenizer(), { maxBatch: 1, windowMs: 0 }),
      short,
      9,
    );
    const service = new GenerationService(() => model, new ByteTokenizer(), { maxBatch: 8, windowMs: 20 });
    const [together, last, none] = await Promise.all([
      ask(service, short, 9),
      ask(service, nearEnd, 3),
      ask(service, full, 4),
    ]);
    expect(together.tokens).toEqual(alone.tokens);
    expect(together.tokens.length).toBeGreaterThan(2); // not cut to the long conversation's room
    expect(last.tokens.length).toBeLessThanOrEqual(2);
    expect(none).toMatchObject({ text: '', tokens: [], finish_reason: 'length' });
  });
});

describe('lengthBuckets', () => {
  it('puts prompts of similar length together, so a long one does not pad every short one', () => {
    const lengths = [100, 400, 105, 98, 410, 130];
    const buckets = lengthBuckets([0, 1, 2, 3, 4, 5], (i) => lengths[i]);
    // 4 × 130 padded positions for 433 real ones is within the allowance; a 400 among them is not.
    expect(buckets).toEqual([
      [3, 0, 2, 5],
      [1, 4],
    ]);
  });
});

describe('GenerationService.episodesInFlight', () => {
  const shaped = (layers: number, kvHeads: number, headDim: number, positions: number) => ({
    ...TINY_MODEL,
    numLayers: layers,
    numKvHeads: kvHeads,
    headDim,
    maxPositions: positions,
  });

  it('keeps a whole update in flight for a small model, fewer where the key/value cache would not fit, never fewer than 8', () => {
    expect(GenerationService.episodesInFlight(24, shaped(5, 2, 32, 1024))).toBe(24); // spindle-base: 2.6 MB a row
    expect(GenerationService.episodesInFlight(64, shaped(5, 2, 32, 1024))).toBe(GenerationService.BATCHED.maxBatch);
    expect(GenerationService.episodesInFlight(24, shaped(24, 2, 64, 1024))).toBe(10); // a Qwen2.5-0.5B shape: 25 MB a row
    expect(GenerationService.episodesInFlight(24, shaped(30, 3, 64, 8192))).toBe(GenerationService.CONCURRENT_EPISODES);
    expect(GenerationService.episodesInFlight(4, shaped(5, 2, 32, 1024))).toBe(GenerationService.CONCURRENT_EPISODES);
  });
});
