/**
 * A run on a slow engine: episodes that spend far longer than the hang timeout waiting for
 * tokens finish on their first worker, and Stop during a generation that would never end stops the run
 * promptly, as 'stopped', with the last finished update's checkpoint.
 */
import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { validateRunConfig } from '../../src/config/validate.ts';
import type { Trajectory } from '../../src/contracts.ts';
import { initBackend } from '../../src/kernels/backend.ts';
import type { RunEvent } from '../../src/pipeline/operations/events.ts';
import type { RemoteGenerator } from '../../src/pipeline/engine/generation.ts';
import { loadNodeModel } from '../../src/pipeline/platform/node.ts';
import type { EpisodeJob, RolloutSettings } from '../../src/pipeline/engine/rollout-protocol.ts';
import { PipelineRun } from '../../src/pipeline/operations/run.ts';
import { getRun, loadLatestCheckpoint, openStore } from '../../src/store/index.ts';
import { trajectory } from '../train/fixtures.ts';
import { ManualClock } from './manual-clock.ts';
import { EndlessTokenizer, writeTinyModel } from './tiny-model.ts';

let modelDir: string;

beforeAll(async () => {
  await initBackend({ forced: 'wasm' });
  modelDir = await writeTinyModel(5, 'spindle-progress-model-');
});

function config(maxSteps: number, workers = 2) {
  const { config, errors } = validateRunConfig({
    name: 'slow-engine',
    model: { base_model: modelDir },
    lora: { r: 2, alpha: 4, target_modules: ['q_proj'] },
    training: {
      max_steps: maxSteps,
      batch_size: 1,
      group_size: 2,
      checkpoint_every: 10,
      eval_interval: 10,
      eval_at_start: false,
    },
    safety: { enabled: false },
    tasks: { environments: ['arith_tool'] },
    trajectory_collection: { n_workers: workers },
  });
  if (!config) throw new Error(JSON.stringify(errors));
  return config;
}

/** A judged, tokenized trajectory for `job` of run `runId` (half the group succeeds). */
function finished(job: EpisodeJob, runId: string | null): Trajectory {
  const index = Number(job.trajectory_id.split('/').pop());
  return trajectory({
    id: job.trajectory_id,
    group_id: job.group_id,
    run_id: runId,
    task_id: job.task.id,
    env: job.task.env,
    judge_score: index % 2,
    tokens: [1, 40, 41, 42],
    assistant_mask: [0, 1, 1, 1],
    logprobs: [0, -5, -5, -5],
    sampling: job.sampling,
  });
}

/** An in-process rollout worker whose episode is `turns(job)` generation requests of `tokens` each, then a finished trajectory. */
function generatingWorker(generator: RemoteGenerator, turns: (job: EpisodeJob) => number, tokens: number) {
  let alive = true;
  let runId: string | null = null;
  return {
    async configure(settings: RolloutSettings) {
      runId = settings.run_id;
    },
    async run(job: EpisodeJob): Promise<Trajectory> {
      for (let t = 0; t < turns(job) && alive; t++) {
        // A real worker's request crosses a message port (a macrotask); in process, yield as it would.
        await new Promise((r) => setImmediate(r));
        await generator.generate({
          tokens: [5, 6, 7],
          sampling: { ...job.sampling, max_new_tokens: tokens },
          seed: job.seed + t,
        });
      }
      return finished(job, runId);
    },
    terminate() {
      alive = false;
    },
    onCrash() {},
  };
}

const stepOf = (job: EpisodeJob) => Number(job.group_id.split('/')[1]);

describe('a run on a slow engine', () => {
  it('never replaces a worker that waits for tokens, though its episode lasts many hang timeouts', async () => {
    const store = await openStore({ factory: new IDBFactory() });
    // The watchdog's clock moves only while a request waits on the engine: five hang timeouts each time.
    // One worker runs both episodes, so no other worker is in the middle of work of its own meanwhile.
    const clock = new ManualClock();
    const episodeMs: number[] = [];
    const run = new PipelineRun({
      store,
      cores: 2,
      hangTimeoutMs: 20,
      hangClock: clock,
      loadModel: async (cfg) => ({ model: (await loadNodeModel(cfg)).model, tokenizer: new EndlessTokenizer() }),
      spawnWorker: (_i, generator) => {
        const slow: RemoteGenerator = {
          release: (episode) => generator.release(episode),
          generate: (request) => {
            const answer = generator.generate(request); // the wait on the engine is open from here
            clock.advance(5 * 20);
            return answer;
          },
        };
        const worker = generatingWorker(slow, () => 10, 4);
        return {
          ...worker,
          run: async (job) => {
            const t0 = clock.now();
            const t = await worker.run(job);
            episodeMs.push(clock.now() - t0);
            return t;
          },
        };
      },
    });
    const events: RunEvent[] = [];
    run.subscribe((e) => events.push(e));
    const runId = await run.start(config(1, 1));
    await run.done();
    expect(events.filter((e) => e.type === 'error').map((e) => (e as { message: string }).message)).toEqual([]);
    expect((await getRun(store, runId))?.status).toBe('completed');
    // Each episode waited on the engine well past the 20 ms hang timeout (10 turns, one request at a time).
    expect(Math.max(...episodeMs)).toBeGreaterThan(10 * 20);
    store.db.close();
  });

  it('stops during a generation that would never end: promptly, as stopped, with the last finished update kept', async () => {
    const store = await openStore({ factory: new IDBFactory() });
    // Stop is pressed inside the third decoding pass of the first long turn; the passes are counted after.
    let decodingPasses = 0;
    let stopping: Promise<void> | null = null;
    let pressed!: () => void;
    const stopPressed = new Promise<void>((r) => (pressed = r));
    const run: PipelineRun = new PipelineRun({
      store,
      cores: 2,
      loadModel: async (cfg) => {
        const { model } = await loadNodeModel(cfg);
        const forward = model.forward.bind(model);
        vi.spyOn(model, 'forward').mockImplementation((ids, options) => {
          if (options?.lastOnly && ++decodingPasses === 3) {
            stopping = run.stop();
            pressed();
          }
          return forward(ids, options);
        });
        return { model, tokenizer: new EndlessTokenizer() };
      },
      // Step 0's episodes finish at once; step 1's ask for long turns, over and over, until given up.
      spawnWorker: (_i, generator) => generatingWorker(generator, (job) => (stepOf(job) === 0 ? 0 : Infinity), 200),
    });
    const statuses: string[] = [];
    run.subscribe((e) => {
      if (e.type === 'status') statuses.push(e.status);
    });
    const runId = await run.start(config(3));
    await stopPressed;
    await stopping;
    // The turn being sampled asked for 200 tokens: it ended at its next one, not at its end.
    expect(decodingPasses).toBeLessThan(200);
    expect(statuses.slice(-2)).toEqual(['stopping', 'stopped']);
    expect((await getRun(store, runId))?.status).toBe('stopped');
    expect((await loadLatestCheckpoint(store, runId))?.step).toBe(1);
    store.db.close();
  });
});
