import { describe, expect, it } from 'vitest';
import { createCurriculum, groupLevel, levelOf, recordScores } from '../../src/train/curriculum.ts';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';

const CFG = DEFAULT_CONFIG.curriculum; // window 100, threshold 0.75, levels 1..5

describe('curriculum', () => {
  it('does not advance before a full window, even with perfect scores', () => {
    const s0 = createCurriculum(['arith_tool'], CFG);
    const { state, changes } = recordScores(s0, 'arith_tool', new Array(99).fill(1), CFG);
    expect(changes).toEqual([]);
    expect(levelOf(state, 'arith_tool', CFG)).toBe(1);
  });

  it('advances when the mean of the last 100 exceeds 0.75, and logs the change', () => {
    const s0 = createCurriculum(['arith_tool'], CFG);
    // 76 ones + 24 zeros = mean 0.76 > 0.75
    const scores = [...new Array(24).fill(0), ...new Array(76).fill(1)];
    const { state, changes } = recordScores(s0, 'arith_tool', scores, CFG);
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ env: 'arith_tool', from: 1, to: 2 });
    expect(changes[0].windowMean).toBeCloseTo(0.76, 12);
    expect(state.envs.arith_tool).toEqual({ level: 2, recent: [] });
  });

  it('a mean of exactly 0.75 does not advance (strict >)', () => {
    const scores = [...new Array(25).fill(0), ...new Array(75).fill(1)];
    expect(recordScores(createCurriculum(['e'], CFG), 'e', scores, CFG).changes).toEqual([]);
  });

  it('uses only the last window of scores', () => {
    // 100 zeros then ones: the window first exceeds 0.75 at score 176 (24 zeros + 76 ones = 0.76);
    // had old scores counted, the mean over all 180 would be 0.44 and nothing would advance.
    const scores = [...new Array(100).fill(0), ...new Array(80).fill(1)];
    const { changes } = recordScores(createCurriculum(['e'], CFG), 'e', scores, CFG);
    expect(changes).toHaveLength(1);
    expect(changes[0].windowMean).toBeCloseTo(0.76, 12);
  });

  it('keeps environments apart and stops at max_level', () => {
    const cfg = { ...CFG, window: 2, max_level: 3 };
    let st = createCurriculum(['a', 'b'], cfg);
    const r = recordScores(st, 'a', new Array(10).fill(1), cfg);
    st = r.state;
    expect(r.changes.map((c) => c.to)).toEqual([2, 3]);
    expect(levelOf(st, 'a', cfg)).toBe(3);
    expect(levelOf(st, 'b', cfg)).toBe(1);
    expect(levelOf(st, 'unknown', cfg)).toBe(1);
  });

  it('does not mutate the input state', () => {
    const s0 = createCurriculum(['e'], { ...CFG, window: 1 });
    recordScores(s0, 'e', [1], { ...CFG, window: 1 });
    expect(s0.envs.e).toEqual({ level: 1, recent: [] });
  });

  it('rejects a bad config with the field name', () => {
    expect(() => createCurriculum(['e'], { ...CFG, start_level: 6 })).toThrow(/start_level/);
  });
});

describe('groupLevel (curriculum.next_level_share)', () => {
  it('draws a group a level above with the given share, never past the top, never with share 0', () => {
    const draws = Array.from({ length: 1000 }, (_, i) => (i + 0.5) / 1000);
    const above = draws.filter((d) => groupLevel(2, 0.25, d, 5) === 3).length;
    expect(above).toBe(250);
    expect(draws.every((d) => groupLevel(2, 0, d, 5) === 2)).toBe(true);
    expect(draws.every((d) => groupLevel(5, 1, d, 5) === 5)).toBe(true);
    expect(groupLevel(3, 1, 0.99, 4)).toBe(4);
  });
});
