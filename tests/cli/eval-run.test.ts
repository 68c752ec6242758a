/**
 * One evaluation: a run's held-out figure and `spindle eval --run` of its checkpoint are the same
 * operation (rollout/evaluate.ts), so they agree item by item — same items, same scores.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openFileStore } from '../../src/store/file-store.ts';
import { getTrajectories, listEvaluations, listRuns } from '../../src/store/index.ts';
import { cli, tempDir, tinyConfig, writeConfig } from './helpers.ts';

const SHIPPED = join(import.meta.dirname, '../../models/spindle-base');

describe('spindle eval --run', () => {
  it("gives the run's last held-out result, item by item", async () => {
    const dir = tempDir();
    writeConfig(
      dir,
      tinyConfig((c) => {
        c.model.base_model = SHIPPED;
        c.tasks.environments = ['arith_tool', 'letter_count'];
        c.tasks.difficulty_range = [1, 3];
        c.tasks.levels = { arith_tool: 3, letter_count: 3 };
        c.curriculum.enabled = false;
        c.tasks.eval_items = 6;
        c.sampling.max_new_tokens = 96;
        c.trajectory_collection.max_steps_per_trajectory = 2;
        c.training.eval_at_start = false;
      }),
    );
    const trained = await cli(dir, 'train', '--config', 'run.yaml');
    expect(trained.code).toBe(0);
    const store = await openFileStore(join(dir, '.spindle'));
    const [run] = await listRuns(store);
    const evals = (await listEvaluations(store, run.id)).filter((e) => e.step === 1);
    const inRun = new Map<string, (number | null)[]>();
    for (const env of ['arith_tool', 'letter_count']) {
      const ids = Array.from({ length: 6 }, (_, i) => `${run.id}/eval/1/test/${env}/${i}`);
      inRun.set(
        env,
        (await getTrajectories(store, ids)).map((t) => t!.judge_score),
      );
    }
    await store.close();

    const evaluated = await cli(dir, 'eval', '--run', run.id, '--output', 'eval.json');
    expect(evaluated.code).toBe(0);
    expect(evaluated.out).toMatch(new RegExp(`eval: run ${run.id} \\(\\S+\\) at step 1, as the run evaluates itself`));
    const report = JSON.parse(readFileSync(join(dir, 'eval.json'), 'utf8')) as {
      results: { env: string; success: number; n: number }[];
      items_scored: { env: string; score: number | null }[];
    };
    for (const env of ['arith_tool', 'letter_count']) {
      expect(report.items_scored.filter((i) => i.env === env).map((i) => i.score)).toEqual(inRun.get(env));
      expect(report.results.find((r) => r.env === env)!.success).toBe(
        evals.find((e) => e.benchmark === env)!.results.success,
      );
    }
    // Not a vacuous agreement: the shipped model solves some of these and fails others.
    const all = [...inRun.values()].flat();
    expect(all.some((s) => s === 1)).toBe(true);
    expect(all.some((s) => s !== 1)).toBe(true);
  }, 240_000);
});
