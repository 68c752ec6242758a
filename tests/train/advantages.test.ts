import { describe, expect, it } from 'vitest';
import {
  discountedReturns,
  groupAdvantages,
  replayAdvantage,
  sampleStd,
  tokenAdvantages,
  turnCredits,
} from '../../src/train/advantages.ts';
import { trajectory } from './fixtures.ts';

const Z = { mode: 'zscore' as const, rewardScale: 1 };

describe('group advantages', () => {
  it('z-scores with the sample std (n − 1, as statistics.stdev)', () => {
    // scores 1,0,0,1: mean 0.5, squared deviations 4·0.25 = 1, sample var 1/3, std 0.57735
    const g = groupAdvantages([1, 0, 0, 1], Z);
    expect(g.mean).toBe(0.5);
    expect(g.std).toBeCloseTo(Math.sqrt(1 / 3), 12);
    expect(g.advantages[0]).toBeCloseTo(0.5 / Math.sqrt(1 / 3), 6); // 0.866025
    expect(g.advantages[1]).toBeCloseTo(-0.866025, 5);
    expect(g.zeroStd).toBe(false);
  });

  it('z-scores an uneven group', () => {
    // 0.2, 0.4, 0.9: mean 0.5; deviations -0.3,-0.1,0.4; ss 0.26; var 0.13; std 0.360555
    const g = groupAdvantages([0.2, 0.4, 0.9], Z);
    expect(g.std).toBeCloseTo(0.360555, 6);
    expect(g.advantages.map((a) => +a.toFixed(5))).toEqual([-0.83205, -0.27735, 1.1094]);
  });

  it('mean-only (Dr. GRPO) subtracts the mean and applies reward_scale', () => {
    const g = groupAdvantages([0.2, 0.4, 0.9], { mode: 'mean', rewardScale: 2.5 });
    // scaled 0.5, 1, 2.25; mean 1.25
    expect(g.advantages[0]).toBeCloseTo(-0.75, 12);
    expect(g.advantages[1]).toBeCloseTo(-0.25, 12);
    expect(g.advantages[2]).toBeCloseTo(1, 12);
  });

  it('reward_scale cancels under z-score', () => {
    const a = groupAdvantages([0.2, 0.4, 0.9], Z).advantages;
    const b = groupAdvantages([0.2, 0.4, 0.9], { mode: 'zscore', rewardScale: 2.5 }).advantages;
    b.forEach((x, i) => expect(x).toBeCloseTo(a[i], 6));
  });

  it('flags zero-std groups and gives them zero advantages', () => {
    for (const scores of [[1, 1, 1, 1], [0, 0], [0.3]]) {
      const g = groupAdvantages(scores, Z);
      expect(g.zeroStd).toBe(true);
      expect(g.advantages.every((a) => a === 0)).toBe(true);
    }
  });

  it('rejects non-finite scores and empty groups with a message', () => {
    expect(() => groupAdvantages([1, Number.NaN], Z)).toThrow(/null/);
    expect(() => groupAdvantages([], Z)).toThrow(/empty group/);
  });

  it('sample std of two values', () => {
    expect(sampleStd([0, 2])).toBeCloseTo(Math.SQRT2, 12);
  });
});

describe('replay (self-imitation) advantage', () => {
  it('is the clipped gap to the online mean, divided by the online std', () => {
    expect(replayAdvantage(0.9, { mean: 0.5, std: 0.2 }, Z)).toBeCloseTo(2, 6);
    expect(replayAdvantage(0.4, { mean: 0.5, std: 0.2 }, Z)).toBe(0);
    expect(replayAdvantage(0.9, { mean: 0.5, std: 0.2 }, { mode: 'mean', rewardScale: 1 })).toBeCloseTo(0.4, 12);
    // no online spread: no division (an all-fail batch must not blow the advantage up)
    expect(replayAdvantage(1, { mean: 0, std: 0 }, Z)).toBe(1);
    // A nearly flat online batch does not blow a replayed success up: capped at (G−1)/√G.
    expect(replayAdvantage(1, { mean: 0.2, std: 0.02 }, Z)).toBeCloseTo(40, 4);
    expect(replayAdvantage(1, { mean: 0.2, std: 0.02 }, Z, 8)).toBeCloseTo(7 / Math.sqrt(8), 12);
  });
});

describe('discounted returns', () => {
  it('G_t = r_t + γ G_{t+1}', () => {
    const g = discountedReturns([0.05, 0.07, 1.05], 0.9);
    expect(g[2]).toBeCloseTo(1.05, 12);
    expect(g[1]).toBeCloseTo(0.07 + 0.9 * 1.05, 12); // 1.015
    expect(g[0]).toBeCloseTo(0.05 + 0.9 * 1.015, 12); // 0.9635
  });

  it('a terminal-only reward decays as γ^(T−1−t), with the advantage as the final reward', () => {
    const g = turnCredits(3, 2, { gamma: 0.5 });
    expect(g).toEqual([0.5, 1, 2]);
  });

  it('per-turn process rewards add to the turn that earned them and to the turns before it', () => {
    // rewards 0.1, 0, 0.2 + advantage 1 on the last turn, γ 0.5: G_2 = 1.2, G_1 = 0.6, G_0 = 0.1 + 0.3
    const g = turnCredits(3, 1, { gamma: 0.5, turnRewards: [0.1, 0, 0.2] });
    expect(g.map((x) => +x.toFixed(12))).toEqual([0.4, 0.6, 1.2]);
    expect(() => turnCredits(3, 1, { gamma: 0.5, turnRewards: [0.1] })).toThrow(/one per assistant turn/);
  });

  it('rejects gamma outside [0, 1]', () => {
    expect(() => discountedReturns([1], 1.5)).toThrow(/gamma/);
  });
});

describe('token advantages', () => {
  // tokens: [p p | a a a | t t | a a] — prompt, turn 0, tool response, turn 1
  const t = trajectory({
    tokens: [1, 2, 3, 4, 5, 6, 7, 8, 9],
    assistant_mask: [0, 0, 1, 1, 1, 0, 0, 1, 1],
    turn_spans: [
      [2, 5],
      [7, 9],
    ],
  });

  it('puts each turn return on its assistant tokens and 0 elsewhere', () => {
    const a = tokenAdvantages(t, turnCredits(2, 2, { gamma: 0.5 }));
    // G_1 = 2, G_0 = 0.5·2 = 1
    expect(Array.from(a)).toEqual([0, 0, 1, 1, 1, 0, 0, 2, 2]);
  });

  it('respects the mask inside a span (the assistant header is prompt)', () => {
    const u = trajectory({ tokens: [1, 2, 3, 4], assistant_mask: [0, 0, 1, 1], turn_spans: [[0, 4]] });
    expect(Array.from(tokenAdvantages(u, [-1]))).toEqual([0, 0, -1, -1]);
  });

  it('without turn spans, every assistant token gets the advantage', () => {
    const u = trajectory({ tokens: [1, 2, 3], assistant_mask: [0, 1, 1], turn_spans: [] });
    expect(Array.from(tokenAdvantages(u, [0.5]))).toEqual([0, 0.5, 0.5]);
  });

  it('rejects credits that do not match the turns', () => {
    expect(() => tokenAdvantages(t, [1])).toThrow(/1 turn credits for a trajectory of 2 turns/);
  });

  it('rejects a misaligned mask or span', () => {
    expect(() => tokenAdvantages(trajectory({ tokens: [1, 2], assistant_mask: [1] }), [1])).toThrow(/align/);
    expect(() =>
      tokenAdvantages(trajectory({ tokens: [1, 2], assistant_mask: [1, 1], turn_spans: [[0, 3]] }), [1]),
    ).toThrow(/outside/);
  });
});
