/**
 * Rollout workers are configured once: a run sends each worker it starts (a replacement too, before its
 * first episode) the run's settings and its user environment's source, and each episode job carries only
 * what differs between episodes. The fake workers here copy every message as postMessage would
 * (structured clone) and record it, so what crosses the boundary is what the test reads.
 */
import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it } from 'vitest';
import { validateRunConfig } from '../../src/config/validate.ts';
import type { Trajectory } from '../../src/contracts.ts';
import { getEnvironment } from '../../src/envs/registry.ts';
import { environmentSourceFromFile } from '../../src/envs/sources.ts';
import { initBackend } from '../../src/kernels/backend.ts';
import {
  configuredWorker,
  type EpisodeJob,
  type RolloutSettings,
  type RolloutWorker,
} from '../../src/pipeline/engine/rollout-protocol.ts';
import { WorkerPool } from '../../src/pipeline/engine/worker-pool.ts';
import { PipelineRun } from '../../src/pipeline/operations/run.ts';
import { loadNodeModel } from '../../src/pipeline/platform/node.ts';
import { getRun, openStore } from '../../src/store/index.ts';
import { trajectory } from '../train/fixtures.ts';
import { writeTinyModel } from './tiny-model.ts';

/** What a fake worker was sent, in order: its instance (spawn order), the call, and the copy it received. */
interface Message {
  worker: number;
  kind: 'configure' | 'run';
  payload: RolloutSettings | EpisodeJob;
}

/** The fields an episode job may carry: none of the run's fixed settings, no environment source. */
const PER_EPISODE = ['trajectory_id', 'group_id', 'task', 'seed', 'sampling', 'policy', 'judging'];

/**
 * Fake rollout workers that answer each episode at once with a judged, tokenized trajectory; `crashFirst`
 * makes the first worker's thread die during its first episode (its crash event), so the pool replaces it.
 */
function recordingWorkers(crashFirst: boolean) {
  const messages: Message[] = [];
  let spawned = 0;
  const spawn = (): RolloutWorker => {
    const worker = spawned++;
    let runId: string | null = null;
    let crash: (error: Error) => void = () => {};
    let crashed = false;
    return {
      async configure(settings) {
        const copy = structuredClone(settings);
        messages.push({ worker, kind: 'configure', payload: copy });
        runId = copy.run_id;
      },
      async run(job) {
        const copy = structuredClone(job);
        messages.push({ worker, kind: 'run', payload: copy });
        if (crashFirst && worker === 0 && !crashed) {
          crashed = true;
          setImmediate(() => crash(new Error('exited unexpectedly (code 1)')));
          return new Promise<Trajectory>(() => {});
        }
        const index = Number(copy.trajectory_id.split('/').pop());
        return trajectory({
          id: copy.trajectory_id,
          group_id: copy.group_id,
          run_id: runId,
          task_id: copy.task.id,
          env: copy.task.env,
          judge_score: index % 2,
          tokens: [1, 40, 41, 42],
          assistant_mask: [0, 1, 1, 1],
          logprobs: [0, -5, -5, -5],
          sampling: copy.sampling,
        });
      },
      terminate() {},
      onCrash(callback) {
        crash = callback;
      },
    };
  };
  return { spawn, messages, spawned: () => spawned };
}

/** Which calls each worker got, in order, by worker. */
const callsByWorker = (messages: Message[]) =>
  messages.reduce<string[][]>((calls, m) => ((calls[m.worker] ??= []).push(m.kind), calls), []);

describe('a run configures its rollout workers once', () => {
  let modelDir: string;
  beforeAll(async () => {
    await initBackend({ forced: 'wasm' });
    modelDir = await writeTinyModel(5, 'spindle-configure-model-');
  });

  it("sends a user environment's source once per worker, again to a replacement before its first episode, and never in a job", async () => {
    // A task file whose every row carries a marker, to find its source in whatever crossed to a worker.
    const rows = Array.from({ length: 300 }, (_, i) =>
      JSON.stringify({ prompt: `Row-marker ${i}: what is ${i} + 2?`, answer: String(i + 2) }),
    ).join('\n');
    const source = await environmentSourceFromFile(rows, 'configured-sums.jsonl');
    const { config, errors } = validateRunConfig({
      name: 'configure-once',
      model: { base_model: modelDir },
      lora: { r: 2, alpha: 4, target_modules: ['q_proj'] },
      training: {
        max_steps: 2,
        batch_size: 2,
        group_size: 2,
        checkpoint_every: 10,
        eval_interval: 10,
        eval_at_start: false,
      },
      safety: { enabled: false },
      tasks: { environments: [source.name], eval_items: 2 },
      judge: { judges: [{ type: 'rule', id: 'rule' }], n_judges: 1, min_votes: 1, verifier_gate: true },
      trajectory_collection: { n_workers: 2, tools: ['calc'], max_steps_per_trajectory: 3 },
    });
    if (!config) throw new Error(JSON.stringify(errors));
    const workers = recordingWorkers(true);
    const store = await openStore({ factory: new IDBFactory() });
    const run = new PipelineRun({ store, loadModel: loadNodeModel, cores: 2, spawnWorker: () => workers.spawn() });
    const runId = await run.start(config, { environments: [source] });
    await run.done();
    expect((await getRun(store, runId))?.status).toBe('completed');

    // Two workers, the first replaced once: three configured, each before anything else and only then.
    expect(workers.spawned()).toBe(3);
    const calls = callsByWorker(workers.messages);
    expect(calls.map((c) => c[0])).toEqual(['configure', 'configure', 'configure']);
    expect(calls.map((c) => c.filter((k) => k === 'configure').length)).toEqual([1, 1, 1]);
    expect(calls[2].length).toBeGreaterThan(1); // the replacement ran episodes, after its configuration
    // The configuration holds the run's fixed settings and the environment's source.
    const configures = workers.messages.filter((m) => m.kind === 'configure').map((m) => m.payload as RolloutSettings);
    for (const settings of configures) {
      expect(settings).toEqual({
        run_id: runId,
        max_steps: 3,
        tool_timeout_ms: config.trajectory_collection.tool_timeout_ms,
        tools: ['calc'],
        judges: [{ type: 'rule', id: 'rule' }],
        n_judges: 1,
        min_votes: 1,
        verifier_gate: true,
        environments: [source],
      });
    }
    // The source crossed the boundary once per worker, in its configuration; a job carries its one task's row at most.
    const rowsIn = (m: Message) => new Set(JSON.stringify(m.payload).match(/Row-marker \d+/g)).size;
    expect(workers.messages.filter((m) => rowsIn(m) === 300).map((m) => m.kind)).toEqual([
      'configure',
      'configure',
      'configure',
    ]);
    expect(Math.max(...workers.messages.filter((m) => m.kind === 'run').map(rowsIn))).toBeLessThanOrEqual(1);
    // Jobs carry only what differs between episodes: training (configured judges) and evaluation (the environment's score).
    const jobs = workers.messages.filter((m) => m.kind === 'run').map((m) => m.payload as EpisodeJob);
    expect(new Set(jobs.map((j) => j.judging))).toEqual(new Set(['configured', 'env']));
    for (const job of jobs) for (const key of Object.keys(job)) expect(PER_EPISODE).toContain(key);
    const largestJob = Math.max(...jobs.map((j) => JSON.stringify(j).length));
    expect(largestJob * 10).toBeLessThan(JSON.stringify(configures[0]).length);
    store.db.close();
  });
});

describe('a configured worker in the pool', () => {
  const settings: RolloutSettings = {
    run_id: 'r',
    max_steps: 2,
    tool_timeout_ms: 100,
    tools: [],
    judges: [],
    n_judges: null,
    min_votes: 1,
    verifier_gate: true,
    environments: [],
  };
  const task = getEnvironment('arith_tool').generate(1, 1, 'train');
  const job = (id: number): EpisodeJob => ({
    trajectory_id: `r/0/0/${id}`,
    group_id: 'r/0/0',
    task,
    seed: id,
    sampling: { temperature: 1, top_k: 0, top_p: 1, max_new_tokens: 4 },
    judging: 'none',
  });

  it('gets no episode before its configuration is done; one whose configuration fails is replaced, and the replacement configured first', async () => {
    const events: string[] = [];
    let spawned = 0;
    const spawn = (): RolloutWorker => {
      const worker = spawned++;
      return {
        async configure() {
          events.push(`configure ${worker}`);
          await new Promise((r) => setImmediate(r)); // configuring takes a turn of the event loop, which an episode must wait out
          if (worker === 0) throw new Error('the environment would not build');
          events.push(`configured ${worker}`);
        },
        async run(j) {
          events.push(`run ${worker} ${j.seed}`);
          return trajectory({ id: j.trajectory_id });
        },
        terminate() {},
        onCrash() {},
      };
    };
    const replaced: string[] = [];
    const pool = new WorkerPool(
      (_i) => configuredWorker(spawn(), settings),
      { size: 1, hangTimeoutMs: 1000, maxAttempts: 3 },
      (_i, why) => replaced.push(why),
    );
    const results = await Promise.all([1, 2].map((id) => pool.submit(job(id))));
    expect(results.map((t) => t.id)).toEqual(['r/0/0/1', 'r/0/0/2']);
    expect(replaced).toEqual(['failed: the environment would not build']);
    // Worker 0 never ran an episode; worker 1 was configured once, before both.
    expect(events).toEqual(['configure 0', 'configure 1', 'configured 1', 'run 1 1', 'run 1 2']);
    pool.close();
  });
});
