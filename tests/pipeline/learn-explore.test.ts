/**
 * Learn's explorable lesson (src/pipeline/app/learn.ts): a stored group recomputed at the reader's
 * settings gives exactly what the trainer's batch builder puts on the tokens at those settings; a
 * smaller group is drawn from the stored one deterministically; bad settings fall back to the run's.
 */
import 'fake-indexeddb/auto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Trajectory } from '../../src/contracts.ts';
import { creditConfig } from '../../src/pipeline/app/episode-turns.ts';
import {
  exploreGroup,
  isFlatGroup,
  lessonKnobs,
  lessonRuns,
  lessonUpdate,
  resampleGroup,
  withKnobs,
  type LessonKnobs,
} from '../../src/pipeline/app/learn.ts';
import { createRng } from '../../src/rng.ts';
import { toScoredGroup } from '../../src/rollout/scored-group.ts';
import { createRun, openStore, putScoredGroup, putTrajectories, type Store } from '../../src/store/index.ts';
import { buildGrpoBatch } from '../../src/train/grpo-batch.ts';
import { ReplayBuffer } from '../../src/train/replay-buffer.ts';
import { demoChainTrajectory, demoTask } from '../../src/ui/sources/demo-data.ts';

const task = { ...demoTask('arith_tool', 2, 17), split: 'train' as const };
/** Eight multi-turn chains on one task (solved, intermediate, retried, gave up, twice), scores spread out. */
const group: Trajectory[] = Array.from({ length: 8 }, (_, i) => ({
  ...demoChainTrajectory(i, task),
  id: `c${i}`,
  group_id: 'g8',
  run_id: 'run-a',
  judge_score: [1, 0.1, 0.8, 0, 0.9, 0.2, 0.7, 0.05][i],
}));
const config = creditConfig();
const knobs = (over: Partial<LessonKnobs> = {}): LessonKnobs => ({ ...lessonKnobs(config), ...over });

/** The per-token advantages the trainer's batch builder gives these trajectories at `cfg`. */
function trainerTokens(trajectories: Trajectory[], cfg = config) {
  const batch = buildGrpoBatch({
    groups: [trajectories],
    replay: new ReplayBuffer({ capacity: 4, admit_threshold: 0 }),
    replayCount: 0,
    rng: createRng(1),
    config: cfg,
  });
  return batch.samples.map((s) => Array.from(s.advantages!));
}

/** The lesson's token values, policy tokens only, as the float32 the update stores. */
function lessonTokens(trajectories: Trajectory[], k: LessonKnobs) {
  const lesson = exploreGroup(trajectories, config, k);
  return lesson.samples.map((s, i) =>
    s
      .tokens!.map((p, j) => (trajectories.find((t) => t.id === s.trajectory_id)!.assistant_mask[j] ? p.value : 0))
      .map((v) => Math.fround(v ?? 0))
      .slice(0, trajectories[i].tokens.length),
  );
}

describe('exploreGroup', () => {
  const settings: [string, Partial<LessonKnobs>][] = [
    ["the run's own settings", {}],
    ['γ = 0.5', { gamma: 0.5 }],
    ['mean-only advantage, γ = 0.8', { advantage: 'mean', gamma: 0.8 }],
    ['process rewards per turn', { process: 'turn', gamma: 0.9 }],
    ['process rewards in the score', { process: 'score' }],
  ];
  for (const [name, over] of settings) {
    it(`puts on each token what the trainer's batch would at ${name}`, () => {
      const k = knobs(over);
      expect(lessonTokens(group, k)).toEqual(trainerTokens(group, withKnobs(config, k)));
    });
  }

  it('spreads the advantage over the turns by γ: the same credit on every turn at γ = 1, γ^d of it at γ < 1', () => {
    const flat = exploreGroup(group, config, knobs({ gamma: 1 })).credit!;
    expect(flat.turns.length).toBeGreaterThan(2);
    expect(new Set(flat.turns.map((t) => t.credit)).size).toBe(1);
    const half = exploreGroup(group, config, knobs({ gamma: 0.5 })).credit!;
    expect(half.advantage).toBe(flat.advantage);
    half.turns.forEach((t) => expect(t.credit).toBeCloseTo(half.advantage * 0.5 ** t.distance, 12));
    expect(Math.abs(half.turns[0].credit)).toBeLessThan(Math.abs(half.turns.at(-1)!.credit));
    // Not vacuous: each setting the reader moves changes what lands on the tokens.
    const base = lessonTokens(group, knobs());
    for (const over of [{ gamma: 0.5 }, { advantage: 'mean' as const }, { process: 'turn' as const }])
      expect(lessonTokens(group, knobs(over))).not.toEqual(base);
  });

  it('computes z-score and mean-only advantages from the same ranked scores', () => {
    const z = exploreGroup(group, config, knobs({ advantage: 'zscore' }));
    const m = exploreGroup(group, config, knobs({ advantage: 'mean' }));
    expect(m.stats).toEqual(z.stats);
    z.samples.forEach((s, i) => {
      expect(m.samples[i].advantage).toBeCloseTo(s.ranked! - z.stats!.mean, 12);
      expect(s.advantage).toBeCloseTo((s.ranked! - z.stats!.mean) / z.stats!.std, 6);
    });
  });

  it('recomputes a smaller group drawn from the stored one, and shows a flat group as teaching nothing', () => {
    const small = exploreGroup(group, config, knobs({ group_size: 3, seed: 4 }));
    expect(small.samples).toHaveLength(3);
    expect(small.stats?.size).toBe(3);
    const drawn = resampleGroup(group, 3, 4);
    expect(lessonTokens(drawn, knobs())).toEqual(trainerTokens(drawn));
    const zeros = group.map((t) => ({ ...t, judge_score: 0 }));
    expect(isFlatGroup(zeros, config)).toBe(true);
    expect(isFlatGroup(group, config)).toBe(false);
    const lesson = exploreGroup(zeros, config, knobs({ gamma: 0.5 }));
    expect(lesson.stats?.zero_std).toBe(true);
    expect(lesson.samples.every((s) => s.advantage === 0)).toBe(true);
    expect(lesson.credit?.flat).toBe(true);
    expect(lesson.samples.flatMap((s) => s.tokens!.map((p) => p.value ?? 0)).every((v) => v === 0)).toBe(true);
  });
});

describe('resampleGroup', () => {
  const items = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
  it('draws the same samples for the same seed, others for other seeds, in stored order', () => {
    expect(resampleGroup(items, 3, 7)).toEqual(resampleGroup(items, 3, 7));
    const draws = new Set([1, 2, 3, 4, 5, 6].map((seed) => resampleGroup(items, 3, seed).join('')));
    expect(draws.size).toBeGreaterThan(1);
    for (const d of draws) expect([...d].sort().join('')).toBe(d);
    expect(resampleGroup(items, 4, 2)).toHaveLength(4);
  });

  it('gives the whole group for its own size or more, for null, and for a size that is not a number', () => {
    expect(resampleGroup(items, null, 1)).toEqual(items);
    expect(resampleGroup(items, 8, 1)).toEqual(items);
    expect(resampleGroup(items, 20, 1)).toEqual(items);
    expect(resampleGroup(items, Number.NaN, 1)).toEqual(items);
    expect(resampleGroup(items, 0, 1)).toHaveLength(1);
  });
});

describe('withKnobs', () => {
  it("applies the reader's settings and falls back to the run's for values out of range or not numbers", () => {
    const run = creditConfig({ grpo: { ...config.grpo, gamma: 0.9, clip_epsilon: 0.25 } });
    const c = withKnobs(run, {
      ...lessonKnobs(run),
      gamma: 0.5,
      clip_epsilon: 0.1,
      advantage: 'mean',
      process: 'turn',
    });
    expect([
      c.grpo.gamma,
      c.grpo.clip_epsilon,
      c.grpo.advantage,
      c.process_rewards.enabled,
      c.process_rewards.apply_to,
    ]).toEqual([0.5, 0.1, 'mean', true, 'turn']);
    const bad = withKnobs(run, {
      ...lessonKnobs(run),
      gamma: Number.NaN,
      clip_epsilon: 'x' as unknown as number,
      advantage: 'nope' as 'mean',
      process: 'odd' as 'off',
    });
    expect([bad.grpo.gamma, bad.grpo.clip_epsilon, bad.grpo.advantage, bad.process_rewards]).toEqual([
      0.9,
      0.25,
      'zscore',
      run.process_rewards,
    ]);
    expect(withKnobs(run, { ...lessonKnobs(run), gamma: 7 }).grpo.gamma).toBe(1);
    expect(lessonKnobs(run)).toMatchObject({ gamma: 0.9, clip_epsilon: 0.25, process: 'off', group_size: null });
  });
});

describe('lesson runs and updates from the store', () => {
  let store: Store;
  beforeAll(async () => {
    store = await openStore({ factory: new IDBFactory() });
  });
  afterAll(() => store.db.close());

  it("lists runs with trained updates by name, newest update first, and reads one update's groups", async () => {
    await createRun(store, { ...config, name: 'chains' }, { id: 'run-a', now: 1 });
    await createRun(store, { ...config, name: 'untrained' }, { id: 'run-b', now: 2 });
    const later = group.slice(0, 4).map((t) => ({ ...t, id: `${t.id}-2`, group_id: 'g-later' }));
    await putTrajectories(store, [...group, ...later]);
    await putScoredGroup(store, {
      group_id: 'g8',
      run_id: 'run-a',
      step: 0,
      env: 'arith_tool',
      task_id: task.id,
      scored: toScoredGroup(group),
      trajectory_ids: group.map((t) => t.id),
    });
    await putScoredGroup(store, {
      group_id: 'g-later',
      run_id: 'run-a',
      step: 2,
      env: 'arith_tool',
      task_id: task.id,
      scored: toScoredGroup(later),
      trajectory_ids: later.map((t) => t.id),
    });
    expect((await lessonRuns(store)).map((r) => [r.id, r.name, r.steps])).toEqual([['run-a', 'chains', [2, 0]]]);
    const update = await lessonUpdate(store, 'run-a', 0);
    expect(update).toMatchObject({ run_id: 'run-a', run_name: 'chains', step: 0 });
    expect(update!.groups.map((g) => [g.id, g.task, g.trajectories.length])).toEqual([['g8', task.prompt, 8]]);
    expect(await lessonUpdate(store, 'run-a', 1)).toBeNull();
    expect(await lessonUpdate(store, 'no-such-run', 0)).toBeNull();
  });
});
