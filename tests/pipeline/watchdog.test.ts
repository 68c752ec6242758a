/**
 * The rollout pool's watchdog judges progress, not an episode's wall time: a worker waiting on a
 * slow engine is never taken for hung, a worker stuck in its own work (a tool call that never returns) is,
 * and a replaced worker's generation requests leave the engine instead of holding up its retry.
 * The engine's tokens and the hang deadlines run on vitest's fake timers, or on a ManualClock where the
 * test needs a deadline to fire late: the test moves the time, so no outcome depends on the machine's speed.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SamplingParams } from '../../src/contracts.ts';
import { Batcher } from '../../src/pipeline/engine/batcher.ts';
import { linkedGenerator, type GenerationRequest, type RemoteGenerator } from '../../src/pipeline/engine/generation.ts';
import { WorkerPool, type WorkerHandle } from '../../src/pipeline/engine/worker-pool.ts';
import type { PolicyTurn } from '../../src/rollout/policy.ts';
import { ManualClock } from './manual-clock.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sampling = (tokens: number): SamplingParams => ({ temperature: 1, top_k: 0, top_p: 1, max_new_tokens: tokens });

/**
 * An engine that samples one token every `msPerToken` for each batch (the real Batcher in front, one batch
 * at a time), stopping early when every request of the batch was given up. `sampled` counts the tokens it
 * computed per request seed, `batches` the seeds of each batch it ran.
 */
function slowEngine(msPerToken: number) {
  const sampled = new Map<number, number>();
  const batches: number[][] = [];
  const batcher = new Batcher<GenerationRequest, PolicyTurn>(
    async (requests, signals) => {
      batches.push(requests.map((r) => r.seed));
      const longest = Math.max(...requests.map((r) => r.sampling.max_new_tokens));
      for (let t = 0; t < longest && !signals.every((s) => s.aborted); t++) {
        await sleep(msPerToken);
        for (const r of requests)
          if (t < r.sampling.max_new_tokens) sampled.set(r.seed, (sampled.get(r.seed) ?? 0) + 1);
      }
      return requests.map((r) => ({
        text: 'x'.repeat(r.sampling.max_new_tokens),
        tokens: [],
        logprobs: [],
        finish_reason: 'length',
      }));
    },
    { maxBatch: 4, windowMs: 2 },
  );
  return {
    engine: { generate: (r: GenerationRequest, signal?: AbortSignal) => batcher.submit(r, signal) },
    batcher,
    sampled,
    batches,
  };
}

type Job = { id: number; turns: number; tokensPerTurn: number; toolHangsOnAttempt?: number };

/** In-process workers running a fake agent loop: generate a turn, run a (fast, or never-returning) tool, repeat. */
function agentWorkers(generatorFor: (link: Parameters<typeof linkedGenerator>[1]) => RemoteGenerator) {
  const attempts = new Map<number, number>();
  let terminated = 0;
  const spawn = (_index: number, link: Parameters<typeof linkedGenerator>[1]): WorkerHandle<Job, string> => {
    const generator = generatorFor(link);
    let alive = true;
    return {
      async run(job) {
        const attempt = (attempts.get(job.id) ?? 0) + 1;
        attempts.set(job.id, attempt);
        let text = '';
        for (let turn = 0; turn < job.turns && alive; turn++) {
          text += (
            await generator.generate({
              tokens: [1],
              sampling: sampling(job.tokensPerTurn),
              seed: job.id * 100 + attempt,
            })
          ).text;
          // The tool call: the worker's own work (a turn of its event loop), or a sandbox call that never comes back.
          if (job.toolHangsOnAttempt === attempt) await new Promise(() => {});
          await new Promise((r) => setImmediate(r));
        }
        return `${job.id}:${text.length}`;
      },
      terminate() {
        alive = false;
        terminated++;
      },
      onCrash() {},
    };
  };
  return { spawn, attempts, terminated: () => terminated };
}

describe('the rollout watchdog', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('never takes a worker waiting on a slow engine for hung, however long its episode', async () => {
    const { engine } = slowEngine(50); // 1 token per 50 ms
    const workers = agentWorkers((link) => linkedGenerator(engine, link));
    const replaced: string[] = [];
    const pool = new WorkerPool(workers.spawn, { size: 2, hangTimeoutMs: 100, maxAttempts: 3 }, (_i, why) =>
      replaced.push(why),
    );
    const started = performance.now();
    // Each episode: 2 turns × 10 tokens at 50 ms a token ≈ 1 s, ten times the hang timeout.
    const all = Promise.all([1, 2].map((id) => pool.submit({ id, turns: 2, tokensPerTurn: 10 })));
    await vi.runAllTimersAsync();
    const results = await all;
    expect(performance.now() - started).toBeGreaterThanOrEqual(1000); // on the fake clock
    expect(results).toEqual(['1:20', '2:20']);
    expect(replaced).toEqual([]);
    expect(pool.stats().restarts).toBe(0);
    pool.close();
  });

  it("does not take a worker for hung when the engine's thread was too busy to hear its next request", async () => {
    const clock = new ManualClock();
    const engine = {
      generate: async (r: GenerationRequest): Promise<PolicyTurn> => ({
        text: 'x'.repeat(r.sampling.max_new_tokens),
        tokens: [],
        logprobs: [],
        finish_reason: 'length',
      }),
    };
    const replaced: string[] = [];
    let hear!: () => void;
    const pool = new WorkerPool<Job, string>(
      (_i, link) => {
        const generator = linkedGenerator(engine, link);
        return {
          // The worker has sent its request; it waits in the engine thread's queue until that thread is free.
          run: (job) =>
            new Promise<string>((resolve) => {
              hear = () =>
                resolve(
                  generator
                    .generate({ tokens: [1], sampling: sampling(2), seed: 1 })
                    .then((t) => `${job.id}:${t.text.length}`),
                );
            }),
          terminate() {},
          onCrash() {},
        };
      },
      { size: 1, hangTimeoutMs: 50, maxAttempts: 3, clock },
      (_i, why) => replaced.push(why),
    );
    const result = pool.submit({ id: 4, turns: 1, tokensPerTurn: 2 });
    // A wasm batch for other workers holds the thread for four hang timeouts (it does not yield between
    // tokens): the deadline fires late, before the request queued behind the batch is heard.
    clock.jump(200);
    expect(replaced).toEqual([]);
    hear();
    await expect(result).resolves.toBe('4:2');
    expect(replaced).toEqual([]);
    pool.close();
  });

  it('replaces a worker whose tool call never returns, and its retry finishes', async () => {
    const { engine } = slowEngine(5);
    const workers = agentWorkers((link) => linkedGenerator(engine, link));
    const replaced: string[] = [];
    const pool = new WorkerPool(workers.spawn, { size: 1, hangTimeoutMs: 100, maxAttempts: 3 }, (_i, why) =>
      replaced.push(why),
    );
    const submitted = pool.submit({ id: 7, turns: 2, tokensPerTurn: 3, toolHangsOnAttempt: 1 });
    await vi.runAllTimersAsync();
    const result = await submitted;
    expect(result).toBe('7:6');
    expect(workers.attempts.get(7)).toBe(2);
    expect(replaced).toHaveLength(1);
    expect(replaced[0]).toMatch(/^hung: no progress of its own .* for 100 ms/);
    pool.close();
  });

  it("drops a replaced worker's generation from the engine, so its retry does not queue behind it", async () => {
    const { engine, batcher, sampled, batches } = slowEngine(20);
    let crash: ((e: Error) => void) | null = null;
    let spawned = 0;
    const pool = new WorkerPool<Job, string>(
      (_i, link) => {
        const generator = linkedGenerator(engine, link);
        const first = spawned++ === 0;
        return {
          async run(job) {
            // The first worker dies (its thread crashes) while the engine samples its long turn.
            if (first) setTimeout(() => crash?.(new Error('worker thread exited')), 60);
            const turn = await generator.generate({
              tokens: [1],
              sampling: sampling(first ? 500 : 3),
              seed: first ? 1 : 2,
            });
            return `${job.id}:${turn.text.length}`;
          },
          terminate() {},
          onCrash(cb) {
            if (first) crash = cb;
          },
        };
      },
      { size: 1, hangTimeoutMs: 10_000, maxAttempts: 2 },
    );
    const started = performance.now();
    const retried = expect(pool.submit({ id: 3, turns: 1, tokensPerTurn: 0 })).resolves.toBe('3:3');
    await vi.runAllTimersAsync();
    await retried;
    // 500 tokens at 20 ms would be 10 s on the fake clock; the abandoned one stopped after a few tokens.
    expect(performance.now() - started).toBeLessThan(2000);
    expect(sampled.get(1)).toBeLessThan(10);
    expect(batches).toEqual([[1], [2]]);
    expect(batcher.pending).toBe(0);
    pool.close();
  });
});
