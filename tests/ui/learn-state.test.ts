/**
 * LearnState over a fake LearnSource: the example until a run has trained, any run / update / group
 * picked, every number recomputed at once when a setting moves, shown at a precision that reproduces
 * by hand, and a bad pick or a failing store never losing what is shown.
 */
import { describe, expect, it } from 'vitest';
import type { Trajectory } from '../../src/contracts.ts';
import { creditConfig } from '../../src/pipeline/app/episode-turns.ts';
import { EXAMPLE_BATCH } from '../../src/ui/screens/learn/example.ts';
import { LearnState, LESSON_STEPS } from '../../src/ui/screens/learn/learn.svelte.ts';
import { roundTo, show } from '../../src/ui/screens/learn/precision.ts';
import type { LearnSource, LessonBatch, LessonRun } from '../../src/ui/screens/learn/source.ts';
import { demoChainTrajectory, demoTask } from '../../src/ui/sources/demo-data.ts';

const task = { ...demoTask('arith_tool', 2, 17), split: 'train' as const };
const chains = (prefix: string, scores: number[]): Trajectory[] =>
  scores.map((s, i) => ({ ...demoChainTrajectory(i, task), id: `${prefix}${i}`, judge_score: s }));

function update(runId: string, step: number, groups: number[][], gamma = 1): LessonBatch {
  return {
    run_id: runId,
    run_name: `${runId} name`,
    step,
    config: creditConfig({ grpo: { ...creditConfig().grpo, gamma } }),
    groups: groups.map((scores, i) => ({
      id: `${runId}-${step}-${i}`,
      env: 'arith_tool',
      task: `task ${i}`,
      trajectories: chains(`${runId}-${step}-${i}-`, scores),
    })),
  };
}

const RUNS: LessonRun[] = [
  { id: 'run-2', name: 'newer', steps: [3, 1] },
  { id: 'run-1', name: 'older', steps: [0] },
];
const UPDATES: Record<string, LessonBatch> = {
  'run-2/3': update(
    'run-2',
    3,
    [
      [0.07, 0.2, 0.08, 0.1],
      [0, 0, 0, 0],
    ],
    1,
  ),
  'run-2/1': update('run-2', 1, [[1, 0, 0, 0]], 1),
  'run-1/0': update('run-1', 0, [[1, 0.5, 0, 0.25, 1, 0]], 0.9),
};

function fakeSource(opts: { runs?: LessonRun[] | Error; delays?: Record<string, Promise<void>> } = {}): LearnSource {
  return {
    runs: async () => {
      if (opts.runs instanceof Error) throw opts.runs;
      return opts.runs ?? RUNS;
    },
    update: async (runId, step) => {
      await opts.delays?.[`${runId}/${step}`];
      if (runId === 'broken') throw new Error('store closed');
      return UPDATES[`${runId}/${step}`] ?? null;
    },
  };
}

describe('LearnState', () => {
  it('keeps the example when nothing was trained yet, and says why when the store fails', async () => {
    const empty = new LearnState(fakeSource({ runs: [] }));
    await empty.load();
    expect(empty.batch).toBe(EXAMPLE_BATCH);
    expect(empty.error).toBeNull();
    // The example walks through a multi-turn sample whose last turn carries exactly its group advantage.
    const w = empty.group!.credit!;
    expect(w.turns.length).toBeGreaterThan(2);
    expect(w.turns.at(-1)!.credit).toBeCloseTo(empty.group!.samples[w.sample].advantage!, 12);
    const failing = new LearnState(fakeSource({ runs: new Error('store closed') }));
    await failing.load();
    expect(failing.error).toBe('store closed');
    expect(failing.batch).toBe(EXAMPLE_BATCH);
  });

  it("opens the newest run's newest update with its settings; another update keeps the settings moved, another run resets them", async () => {
    const state = new LearnState(fakeSource());
    await state.load();
    expect([state.batch.run_id, state.batch.step, state.knobs.gamma]).toEqual(['run-2', 3, 1]);
    state.knobs.gamma = 0.5;
    await state.pickUpdate('run-2', 1);
    expect([state.batch.step, state.knobs.gamma]).toEqual([1, 0.5]);
    await state.pickRun('run-1');
    expect([state.batch.run_id, state.knobs.gamma]).toEqual(['run-1', 0.9]);
  });

  it('recomputes the per-turn credit when γ moves: all equal at γ = 1, γ^d of the advantage below', async () => {
    const state = new LearnState(fakeSource());
    await state.load();
    const at1 = state.group!.credit!.turns.map((t) => t.credit);
    expect(new Set(at1).size).toBe(1);
    state.knobs.gamma = 0.5;
    const w = state.group!.credit!;
    expect(w.gamma).toBe(0.5);
    w.turns.forEach((t) => expect(t.credit).toBeCloseTo(at1[0] * 0.5 ** t.distance, 12));
    state.knobs.advantage = 'mean';
    expect(state.group!.samples[0].advantage).toBeCloseTo(0.07 - 0.1125, 12);
  });

  it('shows numbers that reproduce by hand: each advantage and credit, worked from the numbers shown, rounds to the number shown', async () => {
    const state = new LearnState(fakeSource());
    await state.load();
    state.knobs.gamma = 0.7;
    const g = state.group!;
    const d = state.digits;
    // At 3 decimals the first sample would read (0.07 − 0.113) / 0.06 = −0.717 against a true −0.708.
    expect(d.stats).toBeGreaterThan(d.advantage);
    expect(d.advantage).toBeGreaterThanOrEqual(d.final);
    const shown = (x: number, digits: number) => Number(show(x, digits).replace('−', '-'));
    for (const s of g.samples) {
      const byHand = (shown(s.ranked!, d.stats) - shown(g.stats!.mean, d.stats)) / shown(g.stats!.std, d.stats);
      expect(show(byHand, d.advantage)).toBe(show(s.advantage!, d.advantage));
    }
    const meanByHand = g.samples.reduce((a, s) => a + shown(s.ranked!, d.stats), 0) / g.samples.length;
    expect(roundTo(meanByHand, d.stats)).toBe(roundTo(g.stats!.mean, d.stats));
    const w = g.credit!;
    for (const t of w.turns)
      expect(show(shown(t.discount, d.advantage) * shown(w.advantage, d.advantage), d.final)).toBe(
        show(t.credit, d.final),
      );
  });

  it('clips a ratio moved past 1 ± ε, and stops clipping it when ε grows', async () => {
    const state = new LearnState(fakeSource());
    await state.load();
    expect(state.objectives.every((o) => o !== null && o.ratio === 1 && !o.isClipped)).toBe(true);
    state.drift = 0.3;
    const best = state.group!.samples.findIndex((s) => s.advantage! > 0);
    expect(state.objectives[best]).toMatchObject({ ratio: 1.3, clippedRatio: 1.2, isClipped: true });
    expect(state.objectives[best]!.objective).toBeCloseTo(1.2 * state.group!.samples[best].advantage!, 12);
    state.knobs.clip_epsilon = 0.4;
    expect(state.objectives[best]).toMatchObject({ clippedRatio: 1.3, isClipped: false });
    state.resetKnobs();
    expect([state.drift, state.knobs.clip_epsilon]).toEqual([0, 0.2]);
  });

  it("flags the update's group with no spread, and a smaller drawn group recomputes its mean", async () => {
    const state = new LearnState(fakeSource());
    await state.load();
    expect(state.flatGroups).toEqual([false, true]);
    state.pickGroup(1);
    expect(state.group!.stats!.zero_std).toBe(true);
    expect(state.group!.samples.every((s) => s.advantage === 0)).toBe(true);
    state.pickGroup(0);
    state.knobs.group_size = 2;
    expect(state.group!.samples).toHaveLength(2);
    const drawn = state.group!.samples.map((s) => s.ranked!);
    expect(state.group!.stats!.mean).toBeCloseTo((drawn[0] + drawn[1]) / 2, 12);
  });

  it('drops the answer to an older pick, and keeps the update shown when a pick fails or is out of range', async () => {
    let release!: () => void;
    const slow = new Promise<void>((r) => {
      release = r;
    });
    const state = new LearnState(fakeSource({ delays: { 'run-2/1': slow } }));
    await state.load();
    const older = state.pickUpdate('run-2', 1);
    await state.pickRun('run-1');
    release();
    await older;
    expect(state.batch.run_id).toBe('run-1');
    await state.pickUpdate('run-1', 42);
    expect(state.error).toMatch(/no stored groups/);
    expect(state.batch.run_id).toBe('run-1');
    await state.pickUpdate('broken', 0);
    expect(state.error).toBe('store closed');
    state.pickGroup(7);
    state.pickGroup(Number.NaN);
    expect(state.groupIndex).toBe(0);
    for (let i = 0; i < 10; i++) state.next();
    expect(state.step).toBe(LESSON_STEPS.length - 1);
    for (let i = 0; i < 10; i++) state.previous();
    expect(state.step).toBe(0);
  });
});
