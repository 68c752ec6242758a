import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it } from 'vitest';
import { validateRunConfig } from '../../src/config/validate.ts';
import type { Trajectory } from '../../src/contracts.ts';
import { initBackend } from '../../src/kernels/backend.ts';
import type { QueueSizes } from '../../src/pipeline/operations/events.ts';
import { loadNodeModel } from '../../src/pipeline/platform/node.ts';
import type { EpisodeJob, RolloutSettings } from '../../src/pipeline/engine/rollout-protocol.ts';
import { PipelineRun } from '../../src/pipeline/operations/run.ts';
import { openStore } from '../../src/store/index.ts';
import { trajectory } from '../train/fixtures.ts';
import { writeTinyModel } from './tiny-model.ts';

let modelDir: string;

beforeAll(async () => {
  await initBackend();
  modelDir = await writeTinyModel(5, 'spindle-prefetch-model-');
});

/** An in-process rollout worker that answers at once with a judged, tokenized trajectory (half the group succeeds). */
function instantWorker(jobs: EpisodeJob[]) {
  let runId: string | null = null;
  return {
    async configure(settings: RolloutSettings) {
      runId = settings.run_id;
    },
    async run(job: EpisodeJob): Promise<Trajectory> {
      jobs.push(job);
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
    },
    terminate() {},
    onCrash() {},
  };
}

describe('prefetch', () => {
  it('rolls out max_offpolicy_updates steps ahead of the trainer and reports the real queue', async () => {
    const { config, errors } = validateRunConfig({
      name: 'prefetch',
      model: { base_model: modelDir },
      lora: { r: 2, alpha: 4, target_modules: ['q_proj'] },
      training: { max_steps: 4, batch_size: 1, group_size: 2, checkpoint_every: 10, eval_interval: 10 },
      safety: { enabled: false },
      tasks: { environments: ['arith_tool'] },
      trajectory_collection: { n_workers: 1, max_offpolicy_updates: 2, reproducible: false },
    });
    if (!config) throw new Error(JSON.stringify(errors));
    const jobs: EpisodeJob[] = [];
    const store = await openStore({ factory: new IDBFactory() });
    const run = new PipelineRun({ store, loadModel: loadNodeModel, cores: 1, spawnWorker: () => instantWorker(jobs) });
    const queues: { done: number; queue: QueueSizes }[] = [];
    run.subscribe((e) => {
      if (e.type === 'progress') queues.push({ done: e.done, queue: e.queue });
    });
    await run.start(config);
    await run.done();

    // Training rollouts' group ids are `<run>/<step>/<group>` (the final evaluation's are not).
    const steps = jobs.filter((job) => job.judging === 'configured').map((job) => Number(job.group_id.split('/')[1]));
    // Every step is rolled out once, prefetched or not.
    expect(steps).toEqual([0, 0, 1, 1, 2, 2, 3, 3]);
    // After update 1 steps 2 and 3 are ahead (both finished: instant workers); near the end fewer remain.
    expect(queues[0]).toEqual({
      done: 1,
      queue: { pending_tasks: 0, in_flight: 0, ready_groups: 2, offpolicy_updates: 2 },
    });
    expect(queues.at(-1)?.queue.offpolicy_updates).toBe(0);
    store.db.close();
  });
});
