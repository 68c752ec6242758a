import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import {
  openStore,
  createRun,
  getRun,
  listRuns,
  setRunStatus,
  deleteRun,
  putTrajectory,
  putTrajectories,
  getTrajectory,
  getGroup,
  listGroups,
  putScoredGroup,
  appendMetrics,
  listMetrics,
  addMarker,
  listMarkers,
  saveCheckpoint,
  stageCheckpoint,
  loadLatestCheckpoint,
  listCheckpoints,
  getCheckpointHead,
  putEvaluation,
  listEvaluations,
  putSkill,
  recordSkillUse,
  listSkills,
  getSetting,
  setSetting,
  deleteTrajectories,
  StoreError,
  type Store,
} from '../../src/store/index.ts';
import type { ScoredGroup } from '../../src/contracts.ts';
import { makeTrajectory } from './fixtures.ts';

const opened: Store[] = [];
async function fresh(): Promise<Store> {
  const store = await openStore({ factory: new IDBFactory() });
  opened.push(store);
  return store;
}
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

const group: ScoredGroup = {
  tokens: [[1, 2]],
  masks: [[-100, 2]],
  scores: [1],
  advantages: null,
  ref_logprobs: null,
  messages: null,
  inference_logprobs: [[1, -0.3]],
  generation_params: null,
  overrides: null,
  group_overrides: null,
  images: null,
  env_id: null,
};

describe('runs, trajectories and groups', () => {
  it('creates runs and lists them newest first with status updates', async () => {
    const store = await fresh();
    await createRun(store, DEFAULT_CONFIG, { id: 'old', now: 1 });
    await createRun(store, { ...DEFAULT_CONFIG, name: 'second' }, { id: 'new', now: 2 });
    expect((await listRuns(store)).map((r) => r.id)).toEqual(['new', 'old']);
    await setRunStatus(store, 'old', 'failed', 'out of memory');
    expect(await getRun(store, 'old')).toMatchObject({
      status: 'failed',
      error: 'out of memory',
      config: DEFAULT_CONFIG,
    });
  });

  it('writes a trajectory and its group update together', async () => {
    const store = await fresh();
    const a = makeTrajectory({ group_id: 'g1' });
    const b = makeTrajectory({ group_id: 'g1' });
    await putTrajectory(store, a);
    await putTrajectory(store, b);
    await putTrajectory(store, a); // re-put does not duplicate the group entry
    expect(await getTrajectory(store, a.id)).toEqual(a);
    expect((await getGroup(store, 'g1'))?.trajectory_ids).toEqual([a.id, b.id]);
    await putScoredGroup(store, {
      group_id: 'g1',
      run_id: 'run-a',
      step: 3,
      env: 'arith_tool',
      task_id: a.task_id,
      scored: group,
    });
    expect(
      (await listGroups(store, 'run-a', 3, 3)).map((g) => [g.id, g.trajectory_ids.length, g.scored?.scores]),
    ).toEqual([['g1', 2, [1]]]);
    await deleteTrajectories(store, [a.id]);
    expect((await getGroup(store, 'g1'))?.trajectory_ids).toEqual([b.id]);
  });

  it('rolls back the trajectory when its transaction fails (nothing half-written)', async () => {
    const store = await fresh();
    const good = makeTrajectory({ group_id: 'g2' });
    await putTrajectory(store, good);
    // A record IndexedDB cannot clone fails the transaction after the first put already happened.
    const bad = { ...makeTrajectory({ group_id: 'g2' }), extra: () => 1 } as never;
    await expect(putTrajectories(store, [makeTrajectory({ id: 'first', group_id: 'g2' }), bad])).rejects.toThrow(
      /Could not save 2 trajectories.*Nothing from this save was written/,
    );
    expect(await getTrajectory(store, 'first')).toBeUndefined();
    expect((await getGroup(store, 'g2'))?.trajectory_ids).toEqual([good.id]);
  });

  it('deletes a run with everything it produced, leaving other runs alone', async () => {
    const store = await fresh();
    await createRun(store, DEFAULT_CONFIG, { id: 'r1' });
    await createRun(store, DEFAULT_CONFIG, { id: 'r2' });
    await putTrajectories(store, [
      makeTrajectory({ run_id: 'r1', group_id: 'x1' }),
      makeTrajectory({ run_id: 'r2', group_id: 'x2' }),
    ]);
    await appendMetrics(store, { run_id: 'r1', step: 0, time: 1, metrics: { reward: 1 } });
    await appendMetrics(store, { run_id: 'r2', step: 0, time: 1, metrics: { reward: 2 } });
    await addMarker(store, { kind: 'curriculum', run_id: 'r1', step: 1, env: 'e', from: 1, to: 2, time: 1 });
    await saveCheckpoint(store, { run_id: 'r1', step: 1, adapter: new ArrayBuffer(8), optimizer: null });
    await deleteRun(store, 'r1');
    expect(await getRun(store, 'r1')).toBeUndefined();
    expect(await listMetrics(store, 'r1')).toEqual([]);
    expect(await listMarkers(store, 'r1')).toEqual([]);
    expect(await loadLatestCheckpoint(store, 'r1')).toBeUndefined();
    expect(await getGroup(store, 'x1')).toBeUndefined();
    expect((await listMetrics(store, 'r2')).length).toBe(1);
    expect(await getGroup(store, 'x2')).toBeDefined();
  });
});

describe('metrics, markers, replay, evaluations, skills, settings', () => {
  it('appends metrics, merges a step logged twice, and keeps the run summary current', async () => {
    const store = await fresh();
    await createRun(store, DEFAULT_CONFIG, { id: 'r' });
    await appendMetrics(store, { run_id: 'r', step: 0, time: 1, metrics: { reward: 0.1, kl: NaN } });
    await appendMetrics(store, { run_id: 'r', step: 1, time: 2, metrics: { reward: 0.4 } });
    await appendMetrics(store, { run_id: 'r', step: 1, time: 3, metrics: { 'eval/arith_tool/success': 0.5 } });
    const rows = await listMetrics(store, 'r');
    expect(rows.map((m) => m.step)).toEqual([0, 1]);
    expect(rows[1].metrics).toEqual({ reward: 0.4, 'eval/arith_tool/success': 0.5 });
    expect((await getRun(store, 'r'))?.metrics_summary).toMatchObject({ reward: 0.4, 'eval/arith_tool/success': 0.5 });
    expect((await getRun(store, 'r'))?.last_step).toBe(1);
    await addMarker(store, {
      kind: 'regression',
      run_id: 'r',
      step: 5,
      benchmark: 'b',
      baseline: 0.8,
      current: 0.7,
      rolled_back_to: 4,
      time: 9,
    });
    expect(await listMarkers(store, 'r')).toEqual([
      {
        kind: 'regression',
        run_id: 'r',
        step: 5,
        benchmark: 'b',
        baseline: 0.8,
        current: 0.7,
        rolled_back_to: 4,
        time: 9,
      },
    ]);
  });

  it('keeps one evaluation per run, step and benchmark: one stored again (a resumed run redoing it) replaces it', async () => {
    const store = await fresh();
    await putEvaluation(store, { run_id: 'r', step: 4, benchmark: 'arith_tool', results: { success: 0.5 } });
    await putEvaluation(store, { run_id: 'r', step: 4, benchmark: 'letter_count', results: { success: 0.25 } });
    await putEvaluation(store, { run_id: 'r', step: 4, benchmark: 'arith_tool', results: { success: 0.5, n: 32 } });
    await putEvaluation(store, {
      run_id: 'r',
      step: 4,
      benchmark: 'arith_tool/validation',
      results: { success: 0.75 },
    });
    await putEvaluation(store, { run_id: 'other', step: 4, benchmark: 'arith_tool', results: { success: 1 } });
    const listed = await listEvaluations(store, 'r');
    expect(listed.map((e) => e.benchmark).sort()).toEqual(['arith_tool', 'arith_tool/validation', 'letter_count']);
    expect(listed.find((e) => e.benchmark === 'arith_tool')?.results).toEqual({ success: 0.5, n: 32 });
    expect(await store.db.count('evaluations')).toBe(4);
  });

  it('lists an evaluation an older store holds twice (under other keys) once: the later', async () => {
    const store = await fresh();
    for (const [id, created_at, success] of [
      ['eval-a', 1, 0.25],
      ['eval-b', 2, 0.5],
    ] as const) {
      await store.db.put('evaluations', {
        id,
        run_id: 'r',
        step: 4,
        benchmark: 'arith_tool',
        results: { success },
        created_at,
      });
    }
    await putEvaluation(store, { run_id: 'r', step: 2, benchmark: 'arith_tool', results: { success: 0.1 } });
    expect((await listEvaluations(store, 'r')).map((e) => [e.step, e.results.success])).toEqual([
      [2, 0.1],
      [4, 0.5],
    ]);
  });

  it('stores evaluations, skills with use counts, and settings', async () => {
    const store = await fresh();
    await putEvaluation(store, { run_id: 'r', step: 10, benchmark: 'arith_tool', results: { success: 0.5 } });
    await putEvaluation(store, { run_id: 'r', step: 0, benchmark: 'arith_tool', results: { success: 0.25 } });
    expect((await listEvaluations(store, 'r')).map((e) => e.step)).toEqual([0, 10]);
    await putSkill(store, {
      name: 'add',
      description: 'adds',
      usage_count: 1,
      success_rate: 1,
      created: '2025-01-01T00:00:00.000Z',
      markdown: '',
    });
    const used = await recordSkillUse(store, 'add', false, (s) => `uses: ${s.usage_count}`);
    expect(used).toMatchObject({ usage_count: 2, success_rate: 0.5, markdown: 'uses: 2' });
    expect((await listSkills(store)).map((s) => s.name)).toEqual(['add']);
    expect(await getSetting(store, 'theme', 'light')).toBe('light');
    await setSetting(store, 'theme', 'dark');
    expect(await getSetting(store, 'theme', 'light')).toBe('dark');
  });
});

describe('checkpoints', () => {
  const bytes = (n: number) => new Float32Array([n, n + 1]).buffer;

  it('keeps the latest and the previous checkpoint and drops older ones', async () => {
    const store = await fresh();
    const ids = [];
    for (const step of [10, 20, 30])
      ids.push(
        await saveCheckpoint(store, {
          run_id: 'r',
          step,
          adapter: bytes(step),
          optimizer: bytes(-step),
          meta: { step },
        }),
      );
    const latest = await loadLatestCheckpoint(store, 'r');
    expect(latest?.step).toBe(30);
    expect(Array.from(new Float32Array(latest!.adapter))).toEqual([30, 31]);
    expect(Array.from(new Float32Array(latest!.optimizer!))).toEqual([-30, -29]);
    expect(await getCheckpointHead(store, 'r')).toEqual({ run_id: 'r', latest: ids[2], previous: ids[1] });
    expect((await listCheckpoints(store, 'r')).map((c) => c.step)).toEqual([20, 30]);
    // Adapter and optimizer state, two float32 each.
    expect((await listCheckpoints(store, 'r')).map((c) => c.bytes)).toEqual([16, 16]);
  });

  it('also keeps every keepEvery-th step (training.checkpoint_every), and only those', async () => {
    const store = await fresh();
    for (let step = 1; step <= 7; step++)
      await saveCheckpoint(store, { run_id: 'r', step, adapter: bytes(step), optimizer: null }, 3);
    expect((await listCheckpoints(store, 'r')).map((c) => c.step)).toEqual([3, 6, 7]);
    await saveCheckpoint(store, { run_id: 'r', step: 8, adapter: bytes(8), optimizer: null }, 3);
    expect((await listCheckpoints(store, 'r')).map((c) => c.step)).toEqual([3, 6, 7, 8]);
  });

  it('a crash between writing and flipping leaves the previous checkpoint current; the orphan is cleaned later', async () => {
    const store = await fresh();
    await saveCheckpoint(store, { run_id: 'r', step: 1, adapter: bytes(1), optimizer: null });
    await stageCheckpoint(store, { run_id: 'r', step: 2, adapter: bytes(2), optimizer: null }); // "crash" before commit
    expect((await loadLatestCheckpoint(store, 'r'))?.step).toBe(1);
    await saveCheckpoint(store, { run_id: 'r', step: 3, adapter: bytes(3), optimizer: null });
    expect((await listCheckpoints(store, 'r')).map((c) => c.step)).toEqual([1, 3]);
  });

  it('a checkpoint write that fails mid-transaction leaves the previous one intact', async () => {
    const store = await fresh();
    await saveCheckpoint(store, { run_id: 'r', step: 1, adapter: bytes(1), optimizer: null });
    const unclonable = { run_id: 'r', step: 2, adapter: bytes(2), optimizer: null, meta: { fn: () => 0 } };
    await expect(saveCheckpoint(store, unclonable)).rejects.toThrow(/checkpoint of step 2/);
    expect((await loadLatestCheckpoint(store, 'r'))?.step).toBe(1);
    expect((await listCheckpoints(store, 'r')).length).toBe(1);
  });
});

describe('storage failures', () => {
  it('a quota error names what failed, says what to do, and loses nothing stored', async () => {
    const store = await fresh();
    const kept = makeTrajectory({ group_id: 'q' });
    await putTrajectory(store, kept);
    const proto = globalThis.IDBObjectStore.prototype;
    const put = proto.put;
    proto.put = function (this: IDBObjectStore, value: unknown, key?: IDBValidKey) {
      if ((value as { id?: string }).id === 'too-big')
        throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
      return put.call(this, value, key);
    };
    try {
      const error = await putTrajectories(store, [
        makeTrajectory({ id: 'fits', group_id: 'q' }),
        makeTrajectory({ id: 'too-big', group_id: 'q' }),
      ]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).code).toBe('quota');
      expect((error as Error).message).toMatch(
        /storage is full: could not save 2 trajectories.*rolled back.*exporting and deleting/i,
      );
    } finally {
      proto.put = put;
    }
    expect(await getTrajectory(store, 'fits')).toBeUndefined();
    expect(await getTrajectory(store, kept.id)).toEqual(kept);
    expect((await getGroup(store, 'q'))?.trajectory_ids).toEqual([kept.id]);
  });
});
