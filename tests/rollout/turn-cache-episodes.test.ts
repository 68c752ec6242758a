/**
 * Multi-turn episodes with turn caches (model/turn-cache.ts): the shipped model plays file_chain,
 * func_trace and order_total at levels 2–3 one episode at a time with and without reuse, and all at
 * once through the engine's batched GenerationService with reuse. Batched or alone, reuse gives bit for
 * bit the same episodes; against full prefills every token is the same and log-probs agree within 1e-5
 * (sampling.ts: the cached keys of sampled tokens come from the decoding step). Episodes end at
 * different turns in the batch, and every cache is released when its episode ends.
 */
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SamplingParams, Task, Trajectory } from '../../src/contracts.ts';
import { getEnvironment } from '../../src/envs/registry.ts';
import { loadHfModel } from '../../src/hub/hf.ts';
import { initBackend } from '../../src/kernels/backend.ts';
import type { TransformerModel } from '../../src/model/transformer.ts';
import { EnginePolicy, GenerationService } from '../../src/pipeline/engine/generation.ts';
import { runEpisode } from '../../src/rollout/episode.ts';
import { LocalPolicy } from '../../src/rollout/local-policy.ts';
import type { Policy } from '../../src/rollout/policy.ts';
import type { TextTokenizer } from '../../src/tokenizer/tokenizer.ts';

const SAMPLING: SamplingParams = { temperature: 1, top_k: 0, top_p: 1, max_new_tokens: 48 };
const ENVS = ['file_chain', 'func_trace', 'order_total'];
const tasks: Task[] = Array.from({ length: 9 }, (_, i) =>
  getEnvironment(ENVS[i % 3]).generate(500 + i, 2 + (i % 2), 'train'),
);

let model: TransformerModel;
let tokenizer: TextTokenizer;
beforeAll(async () => {
  await initBackend({ forced: 'wasm' });
  ({ model, tokenizer } = await loadHfModel('models/spindle-base'));
});
afterAll(() => model.dispose());

const play = (policy: Policy, task: Task, i: number) =>
  runEpisode({ policy, env: getEnvironment(task.env), task, seed: 77 + i, maxSteps: 6, sampling: SAMPLING });
const sequential = async (policy: Policy) => {
  const out: Trajectory[] = [];
  for (const [i, task] of tasks.entries()) out.push(await play(policy, task, i));
  return out;
};

describe('turn caches in episodes', () => {
  it('replay full prefills, batched or not, and release every cache', async () => {
    await play(new LocalPolicy(model, tokenizer), tasks[0], 0); // warm-up: the model's kept tensors exist from here
    const tensors = tf.memory().numTensors;
    const full = await sequential(new LocalPolicy(model, tokenizer, { reuseTurnCaches: false }));
    const local = new LocalPolicy(model, tokenizer);
    const reused = await sequential(local);
    const service = new GenerationService(() => model, tokenizer);
    const engine = new EnginePolicy('local', tokenizer, service);
    const batched = await Promise.all(tasks.map((task, i) => play(engine, task, i)));

    expect(local.turnCaches!.size).toBe(0);
    expect(service.turnCaches!.size).toBe(0);
    expect(tf.memory().numTensors).toBe(tensors);
    const turns = full.map((t) => t.turn_spans.length);
    expect(turns.filter((n) => n > 1).length, 'multi-turn episodes').toBeGreaterThan(3);
    expect(new Set(turns).size, 'episodes ending at different turns').toBeGreaterThan(1);
    // Every turn after an episode's first continued its cache.
    const laterTurns = turns.reduce((n, k) => n + k - 1, 0);
    expect(local.turnCaches!.stats).toEqual({ hits: laterTurns, stale: 0 });
    expect(service.turnCaches!.stats).toEqual({ hits: laterTurns, stale: 0 });
    for (const [i, t] of full.entries()) {
      expect(reused[i].tokens, `episode ${i}`).toEqual(t.tokens);
      expect(batched[i].tokens, `episode ${i}`).toEqual(t.tokens);
      expect(batched[i].logprobs, `episode ${i}`).toEqual(reused[i].logprobs);
      const worst = Math.max(...t.logprobs.map((lp, k) => Math.abs((lp ?? 0) - (reused[i].logprobs[k] ?? 0))));
      expect(worst, `episode ${i}`).toBeLessThanOrEqual(1e-5);
    }
  }, 600_000);
});
