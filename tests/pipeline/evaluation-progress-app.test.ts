/**
 * A run tells how far its evaluation has got (the Train screen's baseline progress): one
 * `evaluation-progress` event as an environment's evaluation starts (0 done) and one per finished
 * item, counting up to the items evaluated, before that environment's result.
 */
import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it } from 'vitest';
import { validateRunConfig } from '../../src/config/validate.ts';
import { initBackend } from '../../src/kernels/backend.ts';
import type { RunEvent } from '../../src/pipeline/operations/events.ts';
import { loadNodeModel } from '../../src/pipeline/platform/node.ts';
import type { EpisodeJob, RolloutSettings } from '../../src/pipeline/engine/rollout-protocol.ts';
import { PipelineRun } from '../../src/pipeline/operations/run.ts';
import { openStore } from '../../src/store/index.ts';
import { trajectory } from '../train/fixtures.ts';
import { EndlessTokenizer, writeTinyModel } from './tiny-model.ts';

let modelDir: string;

beforeAll(async () => {
  await initBackend({ forced: 'wasm' });
  modelDir = await writeTinyModel(5, 'spindle-eval-progress-model-');
});

describe('evaluation progress', () => {
  it('counts each environment’s items from 0 to its total before its result', async () => {
    const { config, errors } = validateRunConfig({
      name: 'eval-progress',
      model: { base_model: modelDir },
      lora: { r: 2, alpha: 4, target_modules: ['q_proj'] },
      training: { max_steps: 1, batch_size: 1, group_size: 2, eval_interval: 10, eval_at_start: true },
      safety: { enabled: false },
      tasks: { environments: ['arith_tool'], eval_items: 4 },
      trajectory_collection: { n_workers: 1 },
    });
    if (!config) throw new Error(JSON.stringify(errors));
    const store = await openStore({ factory: new IDBFactory() });
    const run = new PipelineRun({
      store,
      cores: 2,
      loadModel: async (cfg) => ({ model: (await loadNodeModel(cfg)).model, tokenizer: new EndlessTokenizer() }),
      spawnWorker: () => {
        let runId: string | null = null;
        return {
          async configure(settings: RolloutSettings) {
            runId = settings.run_id;
          },
          async run(job: EpisodeJob) {
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
      },
    });
    const events: RunEvent[] = [];
    run.subscribe((e) => events.push(e));
    await run.start(config);
    await run.done();
    const baseline = events.filter(
      (e) => (e.type === 'evaluation-progress' || e.type === 'evaluation') && e.step === 0 && e.split === 'test',
    );
    const result = baseline.at(-1)!;
    expect(result.type).toBe('evaluation');
    const n = (result as { n: number }).n;
    expect(n).toBeGreaterThan(0);
    const progress = baseline.slice(0, -1).map((e) => e.type === 'evaluation-progress' && [e.env, e.done, e.total]);
    expect(progress).toEqual(Array.from({ length: n + 1 }, (_, done) => ['arith_tool', done, n]));
    store.db.close();
  });
});
