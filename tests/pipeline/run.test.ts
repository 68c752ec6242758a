import 'fake-indexeddb/auto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateRunConfig } from '../../src/config/validate.ts';
import type { RunConfig } from '../../src/config/schema.ts';
import type { Split } from '../../src/contracts.ts';
import { initBackend } from '../../src/kernels/backend.ts';
import { createNodeRun, spawnNodeRolloutWorker } from '../../src/pipeline/platform/node.ts';
import type { RunEvent } from '../../src/pipeline/operations/events.ts';
import { PipelineRun } from '../../src/pipeline/operations/run.ts';
import type { RemoteGenerator } from '../../src/pipeline/engine/generation.ts';
import { loadNodeModel } from '../../src/pipeline/platform/node.ts';
import {
  getRun,
  getTrajectories,
  listGroups,
  listMetrics,
  loadLatestCheckpoint,
  openStore,
  TrajectoryCommons,
  type Store,
} from '../../src/store/index.ts';
import { storedCredit } from '../../src/pipeline/app/trajectories.ts';
import { tokenAdvantages } from '../../src/train/advantages.ts';
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

async function allTrajectories(store: Store, runId: string, split?: Split) {
  const out = [];
  for await (const t of new TrajectoryCommons(store).load({ run_id: runId, split })) out.push(t);
  return out;
}

describe('the pipeline on worker_threads', () => {
  let store: Store;
  beforeAll(async () => {
    store = await openStore({ factory: new IDBFactory() });
  });
  afterAll(() => store.db.close());

  it('runs GRPO steps with two rollout workers and stores trajectories, groups, metrics and checkpoints', async () => {
    const run = createNodeRun({ store });
    const events: RunEvent[] = [];
    run.subscribe((e) => events.push(e));
    const runId = await run.start(tinyConfig());
    await run.done();

    expect((await getRun(store, runId))?.status).toBe('completed');
    const trajectories = await allTrajectories(store, runId, 'train');
    // 2 steps × 2 groups × 2 samples, each stored once, judged, tokenised.
    expect(trajectories).toHaveLength(8);
    expect(new Set(trajectories.map((t) => t.id)).size).toBe(8);
    for (const t of trajectories) {
      expect(t.votes.length).toBeGreaterThan(0);
      expect(t.tokens.length).toBe(t.assistant_mask.length);
      expect(t.assistant_mask.some((m) => m === 1)).toBe(true);
    }
    expect(new Set(trajectories.map((t) => t.env))).toEqual(new Set(['arith_tool', 'letter_count']));
    // Trained groups (step ≥ 0); the evaluation's groups stay untrained (step -1).
    const trainedGroups = await listGroups(store, runId, 0);
    expect(trainedGroups.length).toBe(4);
    // The advantages each update used are stored with the group, per token: 0 off the policy's tokens.
    for (const g of trainedGroups) {
      const adv = g.scored!.advantages!;
      expect(adv.map((a) => a.length)).toEqual(g.scored!.tokens.map((t) => t.length));
      const members = (await getTrajectories(store, g.trajectory_ids)).map((t) => t!);
      members.forEach((t, i) => expect(adv[i].every((a, k) => a === 0 || t.assistant_mask[k] === 1)).toBe(true));
      const credit = await storedCredit(store, members[0]);
      expect(credit.stored).toEqual(adv[0]);
      // …and they are what the trainer's own functions give (the turn credits a view explains them with).
      if (credit.credits) expect(Array.from(tokenAdvantages(members[0], credit.credits))).toEqual(adv[0]);
    }
    const metrics = await listMetrics(store, runId);
    expect(metrics.map((m) => m.step)).toEqual([1, 2]);
    expect(metrics[0].metrics).toHaveProperty('reward');
    expect(metrics[0].metrics).toHaveProperty('frac_reward_zero_std');
    expect((await loadLatestCheckpoint(store, runId))?.step).toBe(2);
    const types = new Set(events.map((e) => e.type));
    for (const type of [
      'status',
      'episode-start',
      'trajectory',
      'judged',
      'update',
      'progress',
      'checkpoint',
      'evaluation',
    ])
      expect(types).toContain(type);
    // The baseline before the first update and the evaluation at step 2, per environment.
    expect(events.filter((e) => e.type === 'evaluation').map((e) => (e as { step: number }).step)).toEqual([
      0, 0, 2, 2,
    ]);
    // Their held-out episodes are stored too, under their split: 2 evaluations × 2 envs × 2 items.
    const heldOut = await allTrajectories(store, runId, 'test');
    expect(heldOut).toHaveLength(8);
    expect(heldOut.every((t) => /\/eval\/[02]\/test\//.test(t.group_id))).toBe(true);
  });

  it('refuses a config that asks for SFT instead of running GRPO under that name', async () => {
    const config = tinyConfig();
    await expect(
      createNodeRun({ store }).start({ ...config, training: { ...config.training, method: 'sft' } }),
    ).rejects.toThrow(/training.method is sft, but a run trains with GRPO: fine-tune with `spindle sft/);
  });

  it('resumes after the last completed update: counter, metrics and trajectories continue, nothing is redone', async () => {
    const first = createNodeRun({ store });
    const stopped: Promise<void>[] = [];
    first.subscribe((e) => {
      if (e.type === 'checkpoint' && e.step === 1) stopped.push(first.stop());
    });
    const runId = await first.start(tinyConfig({ max_steps: 3, eval_interval: 10 }));
    await first.done();
    await Promise.all(stopped);
    const saved = (await loadLatestCheckpoint(store, runId))!.step;
    expect(saved).toBeGreaterThanOrEqual(1);
    expect(saved).toBeLessThan(3);
    const before = await allTrajectories(store, runId, 'train');
    expect(before).toHaveLength(saved * 2 * 2);

    const second = createNodeRun({ store });
    const updates: number[] = [];
    const trained: string[] = [];
    second.subscribe((e) => {
      if (e.type === 'update') updates.push(e.step);
      if (e.type === 'trajectory' && e.trajectory.split === 'train') trained.push(e.trajectory.id);
    });
    // The config given is ignored: a resumed run keeps its own.
    await second.start(tinyConfig({ max_steps: 99 }), { resumeRunId: runId });
    await second.done();
    expect(updates).toEqual(Array.from({ length: 3 - saved }, (_, i) => saved + 1 + i));
    expect((await listMetrics(store, runId)).map((m) => m.step)).toEqual([1, 2, 3]);
    const after = await allTrajectories(store, runId, 'train');
    expect(after).toHaveLength(3 * 2 * 2);
    expect(after.filter((t) => before.some((b) => b.id === t.id))).toHaveLength(before.length);
    expect(trained.some((id) => before.some((b) => b.id === id))).toBe(false);
    expect((await getRun(store, runId))?.status).toBe('completed');
    // The baseline ran once (not again on resume), and so did the evaluation due at the last step (max_steps).
    expect(await allTrajectories(store, runId, 'test')).toHaveLength(8);
  });

  it('says how often a judge fails (a dead address, a key never saved) and goes on with the others', async () => {
    const config = tinyConfig({ max_steps: 1, eval_interval: 10 });
    const remote = {
      type: 'remote' as const,
      base_url: 'http://127.0.0.1:9/v1',
      model: 'none',
      temperature: 0,
      timeout_ms: 2000,
      max_concurrency: 1,
      max_retries: 0,
    };
    config.judge.judges = [
      { type: 'rule', id: 'rule' },
      { ...remote, id: 'dead', api_key_env: null },
      { ...remote, id: 'nokey', api_key_env: 'secret.nokey' },
    ];
    const run = createNodeRun({ store });
    const failures: Extract<RunEvent, { type: 'judge-failures' }>[] = [];
    run.subscribe((e) => {
      if (e.type === 'judge-failures') failures.push(e);
    });
    const runId = await run.start(config);
    await run.done();
    expect((await getRun(store, runId))?.status).toBe('completed');
    // 1 update × 2 groups × 2 samples, each with a failed vote from both; the counts grow and end at 4 of 4.
    const last = (id: string) => failures.filter((f) => f.judge_id === id).at(-1);
    expect(new Set(failures.map((f) => f.judge_id))).toEqual(new Set(['dead', 'nokey']));
    expect(last('dead')).toMatchObject({ failed: 4, total: 4 });
    expect(last('dead')!.last_reason).toMatch(/network error|fetch|ECONNREFUSED/i);
    expect(last('nokey')).toMatchObject({ failed: 4, total: 4 });
    expect(last('nokey')!.last_reason).toMatch(/could not be set up: .*no API key found under "secret.nokey"/);
    for (const t of await allTrajectories(store, runId, 'train')) {
      expect(t.votes.find((v) => v.judge_id === 'rule')?.score).not.toBeNull();
      expect(t.judge_score).not.toBeNull();
    }
  });

  it('pauses at the next generation batch: no episode finishes while paused, and the run completes after resuming', async () => {
    // The pause has taken effect when the run first waits on it: every episode needs sampling, and an
    // update needs finished episodes, so that first wait is the generation batch's. A pause that sampling
    // ignored shows as finished episodes first (the baseline evaluation's, then the update's).
    let next!: () => void;
    const heldOrFinished = new Promise<void>((r) => (next = r));
    const run = createNodeRun({ store, onHeld: () => next() });
    let trajectories = 0;
    let evaluations = 0;
    let pausedAt = -1;
    run.subscribe((e) => {
      // Paused as the very first episode starts, before any token of this run is sampled.
      if (e.type === 'episode-start' && pausedAt < 0) {
        pausedAt = trajectories;
        void run.pause();
      }
      if (e.type === 'trajectory') {
        trajectories++;
        next();
      }
      if (e.type === 'evaluation') {
        evaluations++;
        next();
      }
    });
    const runId = await run.start(tinyConfig({ max_steps: 1, eval_interval: 10 }));
    await heldOrFinished;
    expect(pausedAt).toBe(0);
    expect(evaluations).toBe(0);
    expect(trajectories).toBe(0);
    expect((await getRun(store, runId))?.status).toBe('paused');
    await run.resume();
    await run.done();
    expect((await getRun(store, runId))?.status).toBe('completed');
    expect(trajectories).toBe(4);
  });

  it('survives a rollout worker killed mid-episode: nothing lost, nothing duplicated', async () => {
    let killed = 0;
    const run = new PipelineRun({
      store,
      loadModel: loadNodeModel,
      cores: 2,
      backend: 'wasm',
      spawnWorker: (i, generator) => {
        // The first worker to ask for tokens dies as it asks: its episode is under way.
        const asking: RemoteGenerator = {
          release: (episode) => generator.release(episode),
          generate: (request) => {
            if (killed++ === 0) void handle.thread.terminate();
            return generator.generate(request);
          },
        };
        const handle = spawnNodeRolloutWorker(i, asking);
        return handle;
      },
    });
    const replaced: string[] = [];
    run.subscribe((e) => {
      if (e.type === 'error' && !e.fatal) replaced.push(e.message);
    });
    const runId = await run.start(tinyConfig({ max_steps: 1, eval_interval: 5 }));
    await run.done();
    expect(replaced.length).toBe(1);
    expect((await getRun(store, runId))?.status).toBe('completed');
    const trajectories = await allTrajectories(store, runId, 'train');
    expect(trajectories).toHaveLength(4);
    expect(new Set(trajectories.map((t) => t.id)).size).toBe(4);
  });
});

describe('a finished run', () => {
  it('leaves no tensors behind once its model is disposed (the optimizer state goes with the run)', async () => {
    const tf = await import('@tensorflow/tfjs');
    const store = await openStore({ factory: new IDBFactory() });
    const before = tf.memory().numTensors;
    let loaded: Awaited<ReturnType<typeof loadNodeModel>> | null = null;
    const run = createNodeRun({ store, loadModel: async (config) => (loaded = await loadNodeModel(config)) });
    await run.start(tinyConfig({ max_steps: 1, eval_interval: 1 }));
    await run.done();
    loaded!.model.dispose();
    expect(tf.memory().numTensors).toBe(before);
    store.db.close();
  });
});
