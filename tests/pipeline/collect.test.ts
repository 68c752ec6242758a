/**
 * Collection without training (what `spindle collect` calls): the jobs of each group, and a collection
 * with the scripted expert into a store, stopped early by its signal.
 */
import 'fake-indexeddb/auto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type RunConfig } from '../../src/config/schema.ts';
import { collectGroups, collectJobs, environmentsWithoutExpert } from '../../src/pipeline/operations/collect.ts';
import { getRun, listGroups, openStore, type Store } from '../../src/store/index.ts';

let store: Store;
beforeAll(async () => {
  store = await openStore({ factory: new IDBFactory() });
});
afterAll(() => store.db.close());

const config: RunConfig = {
  ...DEFAULT_CONFIG,
  tasks: { ...DEFAULT_CONFIG.tasks, environments: ['arith_tool', 'letter_count'], difficulty_range: [1, 2] },
  judge: { ...DEFAULT_CONFIG.judge, judges: [{ type: 'rule', id: 'rule' }] },
};

describe('collection', () => {
  it('builds each group from one task: environments round-robin, levels cycling, a seed per sample', () => {
    const groups = [0, 1, 2, 3].map((g) => collectJobs(config, 'r', g, 3, 'expert'));
    expect(groups.map((jobs) => jobs[0].task.env)).toEqual([
      'arith_tool',
      'letter_count',
      'arith_tool',
      'letter_count',
    ]);
    expect(groups.map((jobs) => jobs[0].task.difficulty)).toEqual([1, 1, 2, 2]);
    for (const jobs of groups) {
      expect(new Set(jobs.map((j) => j.task.id)).size).toBe(1);
      expect(new Set(jobs.map((j) => j.seed)).size).toBe(3);
      expect(
        jobs.every((j) => j.policy === 'expert' && j.judging === 'configured' && j.group_id === jobs[0].group_id),
      ).toBe(true);
    }
    // The same run and group give the same jobs: a collection can be reproduced from its config.
    expect(collectJobs(config, 'r', 2, 3, 'expert')).toEqual(groups[2]);
    // Another run of the same config samples the same: seeds come from the config's seed, not the run id.
    expect(collectJobs(config, 'other', 2, 3, 'expert').map((j) => [j.task.id, j.seed])).toEqual(
      groups[2].map((j) => [j.task.id, j.seed]),
    );
    expect(collectJobs({ ...config, seed: config.seed + 1 }, 'r', 2, 3, 'expert')[0].seed).not.toBe(groups[2][0].seed);
    // An environment with a fixed level stays there; the others still cycle.
    const fixed = { ...config, tasks: { ...config.tasks, levels: { letter_count: 2 } } };
    expect([0, 1, 2, 3].map((g) => collectJobs(fixed, 'r', g, 1, 'expert')[0].task.difficulty)).toEqual([1, 2, 2, 2]);
  });

  it('collects expert groups into a run with their scored groups, and stops after the group its signal fired in', async () => {
    expect(environmentsWithoutExpert(config)).toEqual([]);
    const controller = new AbortController();
    const seen: number[] = [];
    const summary = await collectGroups({
      store,
      config,
      model: null,
      groups: 5,
      groupSize: 2,
      runName: 'collect-test',
      judging: {},
      atropos: null,
      signal: controller.signal,
      onGroup: (all) => {
        seen.push(all.length);
        if (all.length === 4) controller.abort();
      },
    });
    expect(seen).toEqual([2, 4]);
    expect(summary).toMatchObject({ groups: 2, interrupted: true, atropos: null });
    expect(summary.trajectories.every((t) => t.success === true && t.model_id.startsWith('expert:'))).toBe(true);
    expect((await getRun(store, summary.runId))?.status).toBe('stopped');
    const groups = await listGroups(store, summary.runId);
    expect(groups.map((g) => g.scored?.scores)).toEqual([
      [1, 1],
      [1, 1],
    ]);
  });
});
