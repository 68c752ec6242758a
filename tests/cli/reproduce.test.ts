/**
 * Runs reproduce: the same config and seed give the same trajectories and the same weights, however
 * many rollout workers run the episodes and however the generation requests are batched.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openFileStore } from '../../src/store/file-store.ts';
import { listRuns, loadLatestCheckpoint, TrajectoryCommons } from '../../src/store/index.ts';
import { cli, tempDir, tinyConfig, writeConfig } from './helpers.ts';

const SHIPPED = join(import.meta.dirname, '../../models/spindle-base');

async function trainOnce(workers: number): Promise<{ tokens: string[]; weights: string }> {
  const dir = tempDir();
  writeConfig(
    dir,
    tinyConfig((c) => {
      c.model.base_model = SHIPPED;
      c.tasks.environments = ['arith_tool', 'file_chain'];
      c.tasks.difficulty_range = [1, 1];
      c.sampling.max_new_tokens = 64;
      c.trajectory_collection.max_steps_per_trajectory = 3;
      c.trajectory_collection.n_workers = workers;
      c.trajectory_collection.reproducible = true;
      c.training.batch_size = 2;
      c.training.group_size = 4;
      c.training.max_steps = 2;
      c.training.eval_at_start = false;
      c.training.eval_interval = 100;
    }),
  );
  expect((await cli(dir, 'train', '--config', 'run.yaml')).code).toBe(0);
  const store = await openFileStore(join(dir, '.spindle'));
  const [run] = await listRuns(store);
  const tokens: string[] = [];
  for await (const t of new TrajectoryCommons(store).load({ run_id: run.id, split: 'train' }))
    tokens.push(`${t.id.slice(run.id.length)} ${t.tokens.join(',')}`);
  const checkpoint = await loadLatestCheckpoint(store, run.id);
  await store.close();
  return {
    tokens: tokens.sort(),
    weights: createHash('sha256').update(new Uint8Array(checkpoint!.adapter)).digest('hex'),
  };
}

describe('runs reproduce', () => {
  it('one worker and three give the same episodes and the same weights', async () => {
    const one = await trainOnce(1);
    const three = await trainOnce(3);
    expect(three.tokens.length).toBeGreaterThan(8);
    expect(three.tokens).toEqual(one.tokens);
    expect(three.weights).toBe(one.weights);
  }, 120_000); // two training runs: 8 s on a quiet 2-core machine, 35 s on a loaded one
});
