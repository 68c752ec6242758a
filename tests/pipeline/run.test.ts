import 'fake-indexeddb/auto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateRunConfig } from '../../src/config/validate.ts';
import type { RunConfig } from '../../src/config/schema.ts';
import { initBackend } from '../../src/model/backend.ts';
import { createNodeRun, spawnNodeRolloutWorker } from '../../src/pipeline/node.ts';
import type { RunEvent } from '../../src/pipeline/events.ts';
import { PipelineRun } from '../../src/pipeline/run.ts';
import { loadNodeModel } from '../../src/pipeline/node.ts';
import { getRun, listGroups, listMetrics, loadLatestCheckpoint, openStore, TrajectoryCommons, type Store } from '../../src/store/index.ts';
import { writeTinyModel } from './tiny-model.ts';

let modelDir: string;

beforeAll(async () => {
  await initBackend();
  modelDir = await writeTinyModel(5, 'spindle-run-model-');
});

function tinyConfig(over: Partial<RunConfig['training']> = {}): RunConfig {
  const { config, errors } = validateRunConfig({
    name: 'pipeline-test',
    model: { base_model: modelDir },
    lora: { r: 2, alpha: 4, target_modules: ['q_proj', 'v_proj'] },
    training: { max_steps: 2, batch_size: 2, group_size: 2, checkpoint_every: 1, eval_interval: 2, ...over },
    sampling: { max_new_tokens: 12 },
    safety: { enabled: false },
    trajectory_collection: { n_workers: 2, max_steps_per_trajectory: 1 },
    tasks: { environments: ['arith_tool', 'letter_count'], eval_items: 2 },
  });
  if (!config) throw new Error(JSON.stringify(errors));
  return config;
}

async function allTrajectories(store: Store, runId: string) {
  const out = [];
  for await (const t of new TrajectoryCommons(store).load({ run_id: runId })) out.push(t);
  return out;
}

describe('the pipeline on worker_threads', () => {
  let store: Store;
  beforeAll(async () => { store = await openStore({ factory: new IDBFactory() }); });
  afterAll(() => store.db.close());

  it('runs GRPO steps with two rollout workers and stores trajectories, groups, metrics and checkpoints', async () => {
    const run = createNodeRun({ store });
    const events: RunEvent[] = [];
    run.subscribe((e) => events.push(e));
    const runId = await run.start(tinyConfig());
    await run.done();

    expect((await getRun(store, runId))?.status).toBe('completed');
    const trajectories = await allTrajectories(store, runId);
    // 2 steps × 2 groups × 2 samples, each stored once, judged, tokenised.
    expect(trajectories).toHaveLength(8);
    expect(new Set(trajectories.map((t) => t.id)).size).toBe(8);
    for (const t of trajectories) {
      expect(t.votes.length).toBeGreaterThan(0);
      expect(t.tokens.length).toBe(t.assistant_mask.length);
      expect(t.assistant_mask.some((m) => m === 1)).toBe(true);
    }
    expect(new Set(trajectories.map((t) => t.env))).toEqual(new Set(['arith_tool', 'letter_count']));
    expect((await listGroups(store, runId)).length).toBe(4);
    const metrics = await listMetrics(store, runId);
    expect(metrics.map((m) => m.step)).toEqual([1, 2]);
    expect(metrics[0].metrics).toHaveProperty('reward');
    expect(metrics[0].metrics).toHaveProperty('frac_reward_zero_std');
    expect((await loadLatestCheckpoint(store, runId))?.step).toBe(2);
    const types = new Set(events.map((e) => e.type));
    for (const type of ['status', 'episode-start', 'trajectory', 'judged', 'update', 'progress', 'checkpoint', 'evaluation']) expect(types).toContain(type);
    expect(events.filter((e) => e.type === 'evaluation')).toHaveLength(2);
  });

  it('survives a rollout worker killed mid-episode: nothing lost, nothing duplicated', async () => {
    let killed = 0;
    const run = new PipelineRun({
      store, loadModel: loadNodeModel, cores: 2, backend: 'wasm',
      spawnWorker: (i, generator) => {
        const handle = spawnNodeRolloutWorker(i, generator);
        return {
          ...handle,
          run: (job) => {
            // The first episode's worker dies while the episode runs.
            if (killed++ === 0) setTimeout(() => void handle.thread.terminate(), 30);
            return handle.run(job);
          },
        };
      },
    });
    const replaced: string[] = [];
    run.subscribe((e) => { if (e.type === 'error' && !e.fatal) replaced.push(e.message); });
    const runId = await run.start(tinyConfig({ max_steps: 1, eval_interval: 5 }));
    await run.done();
    expect(replaced.length).toBe(1);
    expect((await getRun(store, runId))?.status).toBe('completed');
    const trajectories = await allTrajectories(store, runId);
    expect(trajectories).toHaveLength(4);
    expect(new Set(trajectories.map((t) => t.id)).size).toBe(4);
  });
});
