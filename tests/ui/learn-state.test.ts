/** LearnState over a fake LearnSource: the example until a batch is trained, live batches that keep the reader's place. */
import { describe, expect, it } from 'vitest';
import { EXAMPLE_BATCH } from '../../src/ui/screens/learn/example.ts';
import { LearnState, LESSON_STEPS } from '../../src/ui/screens/learn/learn.svelte.ts';
import type { LearnSource, LessonBatch } from '../../src/ui/screens/learn/source.ts';

const sample = (score: number | null, ratio: number | null = null) => ({ trajectory_id: `t${score}`, final_response: null, score, ratio, tokens: null });

const batch = (scores: (number | null)[][]): LessonBatch => ({
  run_id: 'run-1', step: 4, advantage: 'zscore', reward_scale: 1, clip_epsilon: 0.2, clip_epsilon_high: null,
  groups: scores.map((g, i) => ({ env: 'arith_tool', task: `task ${i}`, samples: g.map((s) => sample(s)) })),
});

function fakeSource(latest: LessonBatch | null | Error) {
  let push: ((b: LessonBatch) => void) | null = null;
  const source: LearnSource = {
    latest: async () => { if (latest instanceof Error) throw latest; return latest; },
    subscribe(onBatch) {
      push = onBatch;
      return () => { push = null; };
    },
  };
  return { source, push: (b: LessonBatch) => push?.(b), listening: () => push !== null };
}

describe('LearnState', () => {
  it('keeps the example when nothing was trained yet, and says why when the store fails', async () => {
    const empty = new LearnState(fakeSource(null).source);
    await empty.load();
    expect(empty.batch).toBe(EXAMPLE_BATCH);
    expect(empty.error).toBeNull();
    // The example walks through a multi-turn sample whose last turn carries exactly its group advantage.
    const w = EXAMPLE_BATCH.groups[0].credit!;
    expect(w.turns.length).toBeGreaterThan(2);
    expect(w.turns.at(-1)!.credit).toBeCloseTo(empty.stats!.advantages[w.sample], 12);
    expect(w.turns[0].credit).toBeCloseTo(w.gamma ** (w.turns.length - 1) * w.advantage, 12);
    const failing = new LearnState(fakeSource(new Error('store closed')).source);
    await failing.load();
    expect(failing.error).toBe('store closed');
    expect(failing.batch).toBe(EXAMPLE_BATCH);
  });

  it('shows the latest batch with the trainer\'s advantages and the clipped objective per sample', async () => {
    const state = new LearnState(fakeSource(batch([[1, 0, 1, 0]])).source);
    await state.load();
    expect(state.batch.run_id).toBe('run-1');
    expect(state.stats?.mean).toBeCloseTo(0.5);
    expect(state.stats?.advantages.map(Math.sign)).toEqual([1, -1, 1, -1]);
    // Ratio 1 (not stored per sample): the objective is the advantage itself, unclipped.
    expect(state.objectives.map((o) => [o.objective, o.isClipped])).toEqual(state.stats!.advantages.map((a) => [a, false]));
  });

  it('replaces the numbers when a new batch arrives but keeps the step; a group index beyond the batch resets', async () => {
    const fake = fakeSource(batch([[1, 0], [0, 0], [1, 1]]));
    const state = new LearnState(fake.source);
    await state.load();
    state.groupIndex = 2;
    state.next();
    state.next();
    fake.push(batch([[0, 1]]));
    expect(state.step).toBe(2);
    expect(state.groupIndex).toBe(0);
    expect(state.group?.samples.map((s) => s.score)).toEqual([0, 1]);
    fake.push(batch([]));
    expect(state.group?.samples.map((s) => s.score)).toEqual([0, 1]);
    for (let i = 0; i < 10; i++) state.next();
    expect(state.step).toBe(LESSON_STEPS.length - 1);
    for (let i = 0; i < 10; i++) state.previous();
    expect(state.step).toBe(0);
    state.dispose();
    expect(fake.listening()).toBe(false);
  });
});
