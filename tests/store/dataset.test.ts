import 'fake-indexeddb/auto';
import { beforeAll, afterAll, describe, expect, it } from 'vitest';
import { openStore, putTrajectories, TrajectoryCommons, queryTrajectories, type Store } from '../../src/store/index.ts';
import type { Trajectory } from '../../src/contracts.ts';
import { makeTrajectory } from './fixtures.ts';

const N = 2000;
let store: Store;
let all: Trajectory[];

// Small records (no tokens) so a few thousand load fast; the code paths are the ones 100k would take.
function small(i: number): Trajectory {
  const steps = makeTrajectory().steps;
  return makeTrajectory({
    id: `d-${String(i).padStart(5, '0')}`,
    env: i % 3 === 0 ? 'arith_tool' : i % 3 === 1 ? 'kv_lookup' : 'json_fix',
    task_id: `${i % 3 === 0 ? 'arith_tool' : 'other'}/${i % 5 === 0 ? 'test' : 'train'}/${i % 4}/${i}`,
    split: i % 5 === 0 ? 'test' : 'train',
    run_id: i % 2 === 0 ? 'run-even' : 'run-odd',
    judge_score: i % 7 === 0 ? null : (i % 10) / 10,
    success: i % 7 === 0 ? null : i % 10 >= 5,
    steps: Array.from({ length: i % 4 }, (_, k) => ({ ...steps[0], step_id: k })),
    created_at: 1_000_000 + ((i * 7919) % N), // not in id order
    tokens: [],
    assistant_mask: [],
    logprobs: [],
    turn_spans: [],
    messages: [],
    votes: [],
    group_id: '',
  });
}

beforeAll(async () => {
  store = await openStore({ factory: new IDBFactory() });
  all = Array.from({ length: N }, (_, i) => small(i));
  for (let i = 0; i < N; i += 1000) await putTrajectories(store, all.slice(i, i + 1000));
});
afterAll(async () => {
  await store.close();
});

const byCreated = (a: Trajectory, b: Trajectory) => a.created_at - b.created_at || (a.id < b.id ? -1 : 1);

describe('the trajectory dataset', () => {
  const commons = () => new TrajectoryCommons(store);

  it('streams every trajectory in created order without one big array', async () => {
    let count = 0;
    let prev = -Infinity;
    for await (const t of commons().load({}, { pageSize: 128 })) {
      expect(t.created_at).toBeGreaterThanOrEqual(prev);
      prev = t.created_at;
      count++;
    }
    expect(count).toBe(N);
  });

  it('applies every filter, alone and combined', async () => {
    const filter = {
      envs: ['arith_tool', 'json_fix'],
      min_score: 0.3,
      max_score: 0.8,
      min_steps: 1,
      max_steps: 2,
      split: 'train' as const,
      run_id: 'run-even',
    };
    const expected = all
      .filter(
        (t) =>
          ['arith_tool', 'json_fix'].includes(t.env) &&
          t.judge_score !== null &&
          t.judge_score >= 0.3 &&
          t.judge_score <= 0.8 &&
          t.steps.length >= 1 &&
          t.steps.length <= 2 &&
          t.split === 'train' &&
          t.run_id === 'run-even',
      )
      .sort(byCreated);
    expect(expected.length).toBeGreaterThan(50);
    const got: string[] = [];
    for await (const t of commons().load(filter, { pageSize: 37 })) got.push(t.id);
    expect(got).toEqual(expected.map((t) => t.id));
    const tasks = [all[0].task_id, all[3].task_id];
    expect((await commons().page({ task_ids: tasks })).items.map((t) => t.task_id).sort()).toEqual([...tasks].sort());
    expect(await commons().count({ task_prefix: 'arith_tool/test/' })).toBe(
      all.filter((t) => t.task_id.startsWith('arith_tool/test/')).length,
    );
  });

  it('pages with a cursor and with an offset, newest first too, ending with next = null', async () => {
    const filter = { envs: ['kv_lookup'] };
    const expected = all
      .filter((t) => t.env === 'kv_lookup')
      .sort(byCreated)
      .reverse()
      .map((t) => t.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await queryTrajectories(store, filter, { pageSize: 250, cursor, newestFirst: true });
      seen.push(...page.items.map((t) => t.id));
      cursor = page.next;
      pages++;
    } while (cursor);
    expect(seen).toEqual(expected);
    expect(pages).toBe(Math.ceil(expected.length / 250));
    const third = await queryTrajectories(store, filter, { pageSize: 10, offset: 20, newestFirst: true });
    expect(third.items.map((t) => t.id)).toEqual(expected.slice(20, 30));
    await expect(queryTrajectories(store, filter, { cursor: 'garbage' })).rejects.toThrow(/not a page cursor/);
  });

  it('computes stats: count, average score over scored ones, average steps, success rate', async () => {
    const subset = all.filter((t) => t.run_id === 'run-odd');
    const scored = subset.filter((t) => t.judge_score !== null);
    const stats = await commons().stats({ run_id: 'run-odd' });
    expect(stats.count).toBe(subset.length);
    expect(stats.scored).toBe(scored.length);
    expect(stats.avg_score).toBeCloseTo(scored.reduce((s, t) => s + t.judge_score!, 0) / scored.length, 10);
    expect(stats.avg_steps).toBeCloseTo(subset.reduce((s, t) => s + t.steps.length, 0) / subset.length, 10);
    const judged = subset.filter((t) => t.success !== null);
    expect(stats.success_rate).toBeCloseTo(judged.filter((t) => t.success).length / judged.length, 10);
    expect(Object.values(stats.by_env).reduce((a, b) => a + b, 0)).toBe(subset.length);
    expect(await commons().count({ run_id: 'run-odd' })).toBe(subset.length);
    expect(await commons().stats({ run_id: 'nope' })).toMatchObject({ count: 0, avg_score: null, avg_steps: null });
  });
});
