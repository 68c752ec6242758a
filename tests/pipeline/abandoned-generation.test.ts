/**
 * Generation nobody waits for any more is dropped: a request given up leaves the batcher
 * whether it was still waiting for a batch, queued behind the running one, or in the running one, and the
 * engine's forward passes stop at the next token once no request of theirs is wanted.
 */
import { getEventListeners } from 'node:events';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { initBackend } from '../../src/kernels/backend.ts';
import { TransformerModel } from '../../src/model/transformer.ts';
import { Batcher } from '../../src/pipeline/engine/batcher.ts';
import { GenerationService } from '../../src/pipeline/engine/generation.ts';
import { EndlessTokenizer, TINY_MODEL } from './tiny-model.ts';

/** A promise and the function that resolves it: a test awaits the moment a batch starts running. */
function signal(): { happened: Promise<void>; fire: () => void } {
  let fire!: () => void;
  const happened = new Promise<void>((r) => (fire = r));
  return { happened, fire };
}

describe('Batcher with abandoned requests', () => {
  it('rejects a request given up while it waits for its batch, and never samples it', async () => {
    const sampled: number[][] = [];
    const batcher = new Batcher<number, number>(
      async (xs) => {
        sampled.push(xs);
        return xs.map((x) => x * 10);
      },
      { maxBatch: 4, windowMs: 20 },
    );
    const gone = new AbortController();
    const kept = batcher.submit(1);
    const dropped = batcher.submit(2, gone.signal);
    gone.abort(new Error('worker replaced'));
    await expect(dropped).rejects.toThrow('worker replaced');
    expect(batcher.pending).toBe(1);
    await expect(kept).resolves.toBe(10);
    expect(sampled).toEqual([[1]]);
    expect(batcher.pending).toBe(0);
  });

  it("listens once on a signal its requests share (a worker's), and gives them all up when it fires", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const started = signal();
    const batcher = new Batcher<number, number>(
      async (xs) => {
        started.fire();
        await gate;
        return xs;
      },
      { maxBatch: 4, windowMs: 1 },
    );
    const worker = new AbortController();
    const answered = Array.from({ length: 4 }, (_, i) => batcher.submit(i, worker.signal)); // the running batch
    await started.happened;
    const queued = Array.from({ length: 12 }, (_, i) => batcher.submit(10 + i, worker.signal));
    expect(getEventListeners(worker.signal, 'abort')).toHaveLength(1);
    release();
    expect(await Promise.all(answered)).toEqual([0, 1, 2, 3]);
    worker.abort(new Error('worker replaced'));
    for (const q of queued) await expect(q).rejects.toThrow('worker replaced');
    expect(batcher.pending).toBe(0);
  });

  it('drops a request queued behind the running batch, and tells the running batch which of its requests were given up', async () => {
    let release!: () => void;
    const running = new Promise<void>((r) => (release = r));
    const sampled: number[][] = [];
    const seen: boolean[][] = [];
    const started = signal();
    const batcher = new Batcher<number, number>(
      async (xs, signals) => {
        sampled.push(xs);
        started.fire();
        if (xs[0] === 1) await running;
        seen.push(signals.map((s) => s.aborted));
        return xs;
      },
      { maxBatch: 1, windowMs: 0 },
    );
    const [a, b] = [new AbortController(), new AbortController()];
    const first = batcher.submit(1, a.signal);
    await started.happened; // the first batch is running
    const second = batcher.submit(2, b.signal);
    const third = batcher.submit(3);
    a.abort();
    b.abort();
    await expect(first).rejects.toThrow(/abandoned|aborted/i);
    await expect(second).rejects.toThrow();
    expect(batcher.pending).toBe(1);
    release();
    await expect(third).resolves.toBe(3);
    // 2 was never sampled; the running batch saw that its request had been given up.
    expect(sampled).toEqual([[1], [3]]);
    expect(seen).toEqual([[true], [false]]);
  });
});

describe('GenerationService with an abandoned request', () => {
  let model: TransformerModel;
  beforeAll(async () => {
    await initBackend({ forced: 'wasm' });
    model = TransformerModel.create(TINY_MODEL, 6);
  });
  afterAll(() => model.dispose());

  it('stops the forward passes of a request given up mid-generation, and serves the next one at once', async () => {
    const gone = new AbortController();
    const original = model.forward.bind(model);
    // Given up during its third forward pass (a wasm generation does not yield to timers between tokens).
    const forward = vi.spyOn(model, 'forward').mockImplementation((...args) => {
      if (forward.mock.calls.length === 3) gone.abort(new Error('run stopped'));
      return original(...args);
    });
    const service = new GenerationService(() => model, new EndlessTokenizer(), GenerationService.ALONE);
    const long = { temperature: 1, top_k: 0, top_p: 1, max_new_tokens: 900 };
    const abandoned = service.generate({ tokens: [5, 6, 7], sampling: long, seed: 1 }, gone.signal);
    const next = service.generate({ tokens: [5, 6, 7], sampling: { ...long, max_new_tokens: 4 }, seed: 2 });
    await expect(abandoned).rejects.toThrow('run stopped');
    const answer = await next;
    await service.idle();
    const passes = forward.mock.calls.length;
    forward.mockRestore();
    expect(answer.tokens).toHaveLength(4);
    // The abandoned request's 3 passes and the next one's 4, not the 900 it asked for.
    expect(passes).toBe(7);
    expect(service.pending).toBe(0);
  });

  it('samples nothing for a request given up before its batch runs', async () => {
    const forward = vi.spyOn(model, 'forward');
    const service = new GenerationService(() => model, new EndlessTokenizer());
    const gone = new AbortController();
    const request = service.generate(
      { tokens: [5, 6], sampling: { temperature: 1, top_k: 0, top_p: 1, max_new_tokens: 50 }, seed: 3 },
      gone.signal,
    );
    gone.abort();
    await expect(request).rejects.toThrow();
    expect(service.pending).toBe(0); // out of the queue: no later batch can sample it
    await service.idle();
    const passes = forward.mock.calls.length;
    forward.mockRestore();
    expect(passes).toBe(0);
  });
});
