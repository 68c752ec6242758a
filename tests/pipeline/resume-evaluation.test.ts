/**
 * A run stopped between the evaluations of two environments at one step (as a kill there leaves it:
 * the first environment's evaluation stored, the second's not) owes that step's evaluation; the resumed
 * run redoes it, and the store then holds each environment's evaluation of that step once.
 */
import 'fake-indexeddb/auto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateRunConfig } from '../../src/config/validate.ts';
import { initBackend } from '../../src/kernels/backend.ts';
import { createNodeRun } from '../../src/pipeline/platform/node.ts';
import { listEvaluations, openStore, type Store } from '../../src/store/index.ts';
import { writeTinyModel } from './tiny-model.ts';

let modelDir: string;
let store: Store;

beforeAll(async () => {
  await initBackend();
  modelDir = await writeTinyModel(3, 'spindle-resume-eval-');
  store = await openStore({ factory: new IDBFactory() });
});
afterAll(() => store.db.close());

describe('resuming a run stopped between two evaluations of a step', () => {
  it("stores each environment's evaluation of the step once", async () => {
    const { config } = validateRunConfig({
      name: 'resume-eval',
      model: { base_model: modelDir },
      lora: { r: 2, alpha: 4, target_modules: ['q_proj', 'v_proj'] },
      training: {
        max_steps: 1,
        batch_size: 1,
        group_size: 2,
        eval_interval: 1,
        eval_at_start: false,
        checkpoint_every: 1,
      },
      sampling: { max_new_tokens: 8 },
      safety: { enabled: false },
      trajectory_collection: { n_workers: 1, max_steps_per_trajectory: 1 },
      tasks: { environments: ['arith_tool', 'letter_count'], eval_items: 2 },
    });
    const first = createNodeRun({ store });
    const stopping: Promise<void>[] = [];
    first.subscribe((e) => {
      if (e.type === 'evaluation' && e.env === 'arith_tool') stopping.push(first.stop());
    });
    const runId = await first.start(config!);
    await first.done();
    await Promise.all(stopping);
    expect((await listEvaluations(store, runId)).map((e) => `${e.step} ${e.benchmark}`)).toEqual(['1 arith_tool']);

    const resumed = createNodeRun({ store });
    const redone: string[] = [];
    resumed.subscribe((e) => {
      if (e.type === 'evaluation') redone.push(`${e.step} ${e.env}`);
    });
    await resumed.start(config!, { resumeRunId: runId });
    await resumed.done();
    expect(redone.sort()).toEqual(['1 arith_tool', '1 letter_count']);
    const stored = await store.db.getAllFromIndex('evaluations', 'run_id', runId);
    expect(stored.map((e) => `${e.step} ${e.benchmark}`).sort()).toEqual(['1 arith_tool', '1 letter_count']);
  });
});
