/**
 * The in-browser judge in runs: with the Judges screen's switch (`judges.in_browser`) on, the config
 * the Train screen shows carries the shipped ONNX judge (the engine reads no setting; it runs the config),
 * and rollout workers given `loadModelJudge` put a vote from 'onnx-judge' on every trajectory beside the rule judge's.
 */
import 'fake-indexeddb/auto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateRunConfig } from '../../src/config/validate.ts';
import type { Trajectory } from '../../src/contracts.ts';
import { loadOnnxJudgeFromDir } from '../../src/judge/onnx-node.ts';
import { initBackend } from '../../src/kernels/backend.ts';
import { loadHfModel } from '../../src/hub/hf.ts';
import { Engine } from '../../src/pipeline/engine/browser-engine.ts';
import {
  applyJudgeSwitches,
  IN_BROWSER_JUDGE,
  IN_BROWSER_JUDGE_SETTING,
  readJudgeSwitches,
} from '../../src/pipeline/operations/judge-settings.ts';
import { createRolloutWorkerApi } from '../../src/pipeline/engine/rollout-worker-api.ts';
import { getRun, openStore, setSetting, TrajectoryCommons, type Store } from '../../src/store/index.ts';
import { writeTinyModel } from './tiny-model.ts';

let modelDir: string;
let store: Store;

beforeAll(async () => {
  await initBackend({ forced: 'wasm' });
  modelDir = await writeTinyModel(5, 'spindle-judge-run-model-');
  store = await openStore({ factory: new IDBFactory() });
});
afterAll(() => store.db.close());

describe('the in-browser ONNX judge in a run', () => {
  it('puts the onnx-judge in the config while the setting is on, and the rollout worker core scores with it', async () => {
    await setSetting(store, IN_BROWSER_JUDGE_SETTING, true);
    const judgeLoads: string[] = [];
    const engine = new Engine({
      initBackend: () => initBackend({ forced: 'wasm' }),
      deviceLost: () => null,
      openStore: async () => store,
      loadModel: async (base) => loadHfModel(base),
      baseModelMissing: () => null,
      // The rollout worker core in this thread, with the Node loader for model judges.
      spawnWorker: (_i, generator) => {
        const api = createRolloutWorkerApi(generator, 'local', {
          loadModelJudge: (id, path) => {
            judgeLoads.push(`${id} ${path}`);
            return loadOnnxJudgeFromDir(path, { id });
          },
        });
        return {
          configure: (settings) => api.configure(settings),
          run: (job) => api.runEpisode(job),
          terminate: () => {},
          onCrash: () => {},
        };
      },
      cores: 1,
    });
    const { config, errors } = validateRunConfig({
      name: 'judge-run',
      model: { base_model: modelDir },
      lora: { r: 2, alpha: 4, target_modules: ['q_proj'] },
      training: { max_steps: 1, batch_size: 1, group_size: 2, checkpoint_every: 1, eval_interval: 50 },
      sampling: { max_new_tokens: 6 },
      safety: { enabled: false },
      trajectory_collection: { n_workers: 1, max_steps_per_trajectory: 1 },
      tasks: { environments: ['arith_tool'], eval_items: 1 },
    });
    if (!config) throw new Error(JSON.stringify(errors));
    const settled = new Promise<string>((resolve) =>
      engine.subscribe((e) => {
        if (e.type === 'status' && ['finished', 'stopped', 'error'].includes(e.status)) resolve(e.status);
      }),
    );
    const runId = await engine.start(applyJudgeSwitches(config, await readJudgeSwitches(store)));
    expect(await settled).toBe('finished');

    expect((await getRun(store, runId))?.config.judge.judges).toEqual([{ type: 'rule', id: 'rule' }, IN_BROWSER_JUDGE]);
    expect(judgeLoads[0]).toBe('onnx-judge models/judge');
    const trajectories: Trajectory[] = [];
    for await (const t of new TrajectoryCommons(store).load({ run_id: runId, split: 'train' })) trajectories.push(t);
    expect(trajectories.length).toBeGreaterThan(0);
    for (const t of trajectories) {
      const vote = t.votes.find((v) => v.judge_id === 'onnx-judge');
      expect(vote?.score, JSON.stringify(t.votes)).toBeGreaterThanOrEqual(0);
      expect(vote!.score!).toBeLessThanOrEqual(1);
      expect(t.votes.map((v) => v.judge_id)).toContain('rule');
    }
  });
});
