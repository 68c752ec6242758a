import { describe, expect, it } from 'vitest';
import { planBatch, ReplayBuffer } from '../../src/train/replay-buffer.ts';
import { createRng } from '../../src/rng.ts';
import { trajectory } from './fixtures.ts';

const traj = (id: string, score: number | null) => trajectory({ id, judge_score: score });

describe('replay buffer', () => {
  it('admits only scores above the threshold (strictly) and no duplicate ids', () => {
    const b = new ReplayBuffer({ capacity: 10, admit_threshold: 0.7 });
    expect(b.offer(traj('a', 0.7))).toBe(false);
    expect(b.offer(traj('b', null))).toBe(false);
    expect(b.offer(traj('c', 0.71))).toBe(true);
    expect(b.offer(traj('c', 0.9))).toBe(false);
    expect(b.size).toBe(1);
  });

  it("admits on the environment's verdict: a failed episode stays out whatever the judges' blend says", () => {
    const b = new ReplayBuffer({ capacity: 10, admit_threshold: 0 });
    expect(b.offer(trajectory({ id: 'liked-but-failed', judge_score: 0.95, success: false }))).toBe(false);
    expect(b.offer(trajectory({ id: 'unjudged', judge_score: 0.95, success: null }))).toBe(false);
    expect(b.offer(trajectory({ id: 'done', judge_score: 0.6, success: true }))).toBe(true);
  });

  it('evicts the lowest priority (oldest among equals) when full, and turns away lower newcomers', () => {
    const b = new ReplayBuffer({ capacity: 3, admit_threshold: 0 });
    b.offer(traj('a', 0.8));
    b.offer(traj('b', 0.75));
    b.offer(traj('c', 0.75));
    expect(b.offer(traj('d', 0.9))).toBe(true); // evicts b (0.75, older than c)
    expect(
      b
        .state()
        .items.map((i) => i.trajectory.id)
        .sort(),
    ).toEqual(['a', 'c', 'd']);
    expect(b.offer(traj('e', 0.75))).toBe(false); // not higher than the lowest (0.75)
    expect(b.size).toBe(3);
  });

  it('samples in proportion to priority over many draws', () => {
    const b = new ReplayBuffer({ capacity: 10, admit_threshold: 0 });
    b.add(traj('a', null), 1);
    b.add(traj('b', null), 2);
    b.add(traj('c', null), 5);
    const n = 40_000;
    const counts: Record<string, number> = { a: 0, b: 0, c: 0 };
    for (const t of b.sample(n, createRng(7))) counts[t.id]++;
    // expected 1/8, 2/8, 5/8; binomial sd ≤ sqrt(0.25/40000) = 0.0025, so ±0.01 is 4 sd
    expect(counts.a / n).toBeCloseTo(0.125, 1);
    expect(Math.abs(counts.a / n - 0.125)).toBeLessThan(0.01);
    expect(Math.abs(counts.b / n - 0.25)).toBeLessThan(0.01);
    expect(Math.abs(counts.c / n - 0.625)).toBeLessThan(0.01);
  });

  it('same seed, same draws; state round-trips through structuredClone', () => {
    const b = new ReplayBuffer({ capacity: 5, admit_threshold: 0.5 });
    ['a', 'b', 'c', 'd'].forEach((id, i) => b.offer(traj(id, 0.6 + i * 0.1)));
    const copy = ReplayBuffer.fromState(structuredClone(b.state()));
    const ids = (x: ReplayBuffer) => x.sample(20, createRng(3)).map((t) => t.id);
    expect(ids(copy)).toEqual(ids(b));
    expect(copy.size).toBe(4);
    // the copy keeps its insertion counter: ties still break the same way
    expect(copy.state().nextSeq).toBe(b.state().nextSeq);
  });

  it('an empty buffer samples nothing', () => {
    expect(new ReplayBuffer({ capacity: 5, admit_threshold: 0 }).sample(4, createRng(1))).toEqual([]);
  });
});

describe('online / replay mix', () => {
  it('70/30 of 4 groups × 8: 3 fresh groups (24) and 10 replayed, 70.6/29.4', () => {
    expect(planBatch({ batchSize: 4, groupSize: 8, onlineRatio: 0.7, replayAvailable: 100 })).toEqual({
      onlineGroups: 3,
      replayCount: 10,
    });
  });

  it('after a regression (capability ratio 0.5): 2 groups and 16 replayed', () => {
    expect(planBatch({ batchSize: 4, groupSize: 8, onlineRatio: 0.5, replayAvailable: 100 })).toEqual({
      onlineGroups: 2,
      replayCount: 16,
    });
  });

  it('an empty or short buffer is made up with fresh groups', () => {
    expect(planBatch({ batchSize: 4, groupSize: 8, onlineRatio: 0.7, replayAvailable: 0 })).toEqual({
      onlineGroups: 4,
      replayCount: 0,
    });
    expect(planBatch({ batchSize: 4, groupSize: 8, onlineRatio: 0.7, replayAvailable: 5 })).toEqual({
      onlineGroups: 4,
      replayCount: 5,
    });
  });

  it('always keeps one online group, and all-online when the ratio is 1', () => {
    expect(planBatch({ batchSize: 1, groupSize: 4, onlineRatio: 0.1, replayAvailable: 100 })).toEqual({
      onlineGroups: 1,
      replayCount: 36,
    });
    expect(planBatch({ batchSize: 4, groupSize: 2, onlineRatio: 1, replayAvailable: 100 })).toEqual({
      onlineGroups: 4,
      replayCount: 0,
    });
    expect(() => planBatch({ batchSize: 4, groupSize: 2, onlineRatio: 0, replayAvailable: 0 })).toThrow(/online_ratio/);
  });
});
