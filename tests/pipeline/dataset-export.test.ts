/**
 * The one dataset export (pipeline/operations/dataset-export.ts), which the Models screen and `spindle export
 * trajectories` both call: chat JSONL and Parquet are train-split unless a split is asked for (a
 * held-out item never reaches training data), filters pick rows, and the count is what was written.
 */
import 'fake-indexeddb/auto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import { parquetToTrajectories } from '../../src/export/parquet.ts';
import { exportDataset } from '../../src/pipeline/operations/dataset-export.ts';
import { distilSkills } from '../../src/pipeline/operations/skills.ts';
import { modelOperations, type ModelEngine } from '../../src/pipeline/app/models.ts';
import { createRun, openStore, putTrajectory, type Store } from '../../src/store/index.ts';
import { makeTrajectory } from '../store/fixtures.ts';

let store: Store;
beforeAll(async () => {
  store = await openStore({ factory: new IDBFactory() });
  await createRun(store, DEFAULT_CONFIG, { id: 'run-x' });
  await putTrajectory(store, makeTrajectory({ run_id: 'run-x', split: 'train', judge_score: 1 }));
  await putTrajectory(store, makeTrajectory({ run_id: 'run-x', split: 'train', judge_score: 0.25 }));
  await putTrajectory(store, makeTrajectory({ run_id: 'run-x', split: 'test', judge_score: 1 }));
});
afterAll(() => store.db.close());

const rows = (data: string | Uint8Array) =>
  (typeof data === 'string' ? data : new TextDecoder().decode(data)).split('\n').filter(Boolean);

describe('exportDataset', () => {
  it('writes chat JSONL from the train split unless all splits are asked for, with filters', async () => {
    const train = await exportDataset(store, 'jsonl', { runId: 'run-x' });
    expect(train.count).toBe(2);
    expect(rows(train.data)).toHaveLength(2);
    expect((await exportDataset(store, 'jsonl', { runId: 'run-x', split: 'all' })).count).toBe(3);
    expect((await exportDataset(store, 'jsonl', { runId: 'run-x', split: 'test' })).count).toBe(1);
    expect((await exportDataset(store, 'jsonl', { runId: 'run-x', minScore: 1 })).count).toBe(1);
    expect((await exportDataset(store, 'jsonl', { runId: 'nope' })).count).toBe(0);
  });

  it('writes Parquet from the train split too unless all splits are asked for, and counts what it wrote', async () => {
    const { data, count } = await exportDataset(store, 'parquet', { runId: 'run-x' });
    expect(count).toBe(2);
    expect((await parquetToTrajectories(data as Uint8Array, 'x.parquet')).map((t) => t.split)).toEqual([
      'train',
      'train',
    ]);
    const all = await exportDataset(store, 'parquet', { runId: 'run-x', split: 'all' });
    expect(all.count).toBe(3);
    expect(await parquetToTrajectories(all.data as Uint8Array, 'x.parquet')).toHaveLength(3);
    expect((await exportDataset(store, 'parquet', { runId: 'run-x', split: 'test' })).count).toBe(1);
  });

  it('leaves held-out episodes out of skills too (their worked examples are SFT data) unless asked', async () => {
    const [train] = await distilSkills(store, { runId: 'run-x', minSuccessRate: 0 });
    const [all] = await distilSkills(store, { runId: 'run-x', minSuccessRate: 0, includeHeldOut: true });
    expect([train.usage_count, all.usage_count]).toEqual([2, 3]);
  });

  it('is what the Models screen exports', async () => {
    const ops = modelOperations(
      async () => store,
      () => ({}) as ModelEngine,
    );
    const file = await ops.exportItem('dataset-jsonl', { runId: 'run-x' }, () => {}, new AbortController().signal);
    const direct = await exportDataset(store, 'jsonl', { runId: 'run-x' });
    expect(await file.blob.text()).toBe(direct.data);
    await expect(
      ops.exportItem('dataset-atropos', { runId: 'run-x' }, () => {}, new AbortController().signal),
    ).rejects.toThrow(/no scored groups/);
  });
});
