import { describe, expect, it } from 'vitest';
import { computeProcessRewards } from '../../src/train/process-rewards.ts';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import { step } from './fixtures.ts';

const W = DEFAULT_CONFIG.process_rewards;
const LONG = 'x'.repeat(51);
const EXACTLY_50 = 'x'.repeat(50);

describe('process rewards (computeProcessRewards)', () => {
  it('0.05 per error-free call, 0.02 per thought over 50 chars, judge score on the last step', () => {
    const steps = [step(0, { thought: LONG }), step(1, { error: 'boom', thought: EXACTLY_50 }), step(2, { thought: LONG })];
    const r = computeProcessRewards({ steps, judge_score: 0.8 }, W);
    expect(r[0]).toBeCloseTo(0.07, 12);
    expect(r[1]).toBe(0); // error, and a 50-char thought is not "> 50"
    expect(r[2]).toBeCloseTo(0.07 + 0.8, 12);
  });

  it('an empty error string counts as success (a falsy error is no error)', () => {
    expect(computeProcessRewards({ steps: [step(0, { error: '' })], judge_score: 0 }, W)).toEqual([0.05]);
  });

  it('a step without a tool call earns only the thought bonus', () => {
    expect(computeProcessRewards({ steps: [step(0, { tool: false, thought: LONG })], judge_score: null }, W)[0]).toBeCloseTo(0.02, 12);
  });

  it('no steps: the terminal score alone', () => {
    expect(computeProcessRewards({ steps: [], judge_score: 0.6 }, W)).toEqual([0.6]);
  });

  it('uses the configured weights', () => {
    const w = { tool_success_bonus: 0.1, thought_bonus: 0.5, thought_min_chars: 3 };
    expect(computeProcessRewards({ steps: [step(0, { thought: 'abcd' })], judge_score: 0 }, w)[0]).toBeCloseTo(0.6, 12);
  });

});
