import { describe, expect, it } from 'vitest';
import { episodeBonuses, stepBonus } from '../../src/train/process-rewards.ts';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import { step, trajectory } from './fixtures.ts';

const W = DEFAULT_CONFIG.process_rewards;
const LONG = 'x'.repeat(51);
const EXACTLY_50 = 'x'.repeat(50);

describe('process rewards (stepBonus)', () => {
  it('0.05 per error-free call, 0.02 per thought over 50 chars', () => {
    const steps = [step(0, { thought: LONG }), step(1, { error: 'boom', thought: EXACTLY_50 })];
    expect(stepBonus(steps[0], W)).toBeCloseTo(0.07, 12);
    expect(stepBonus(steps[1], W)).toBe(0); // error, and a 50-char thought is not "> 50"
  });

  it('an empty error string counts as success (a falsy error is no error)', () => {
    expect(stepBonus(step(0, { error: '' }), W)).toBe(0.05);
  });

  it('a step without a tool call earns only the thought bonus', () => {
    expect(stepBonus(step(0, { tool: false, thought: LONG }), W)).toBeCloseTo(0.02, 12);
  });

  it('uses the configured weights', () => {
    const w = { tool_success_bonus: 0.1, thought_bonus: 0.5, thought_min_chars: 3, recovery_bonus: 0 };
    expect(stepBonus(step(0, { thought: 'abcd' }), w)).toBeCloseTo(0.6, 12);
  });
});

describe('process rewards per episode (episodeBonuses)', () => {
  const w = { ...W, tool_success_bonus: 0, thought_bonus: 0, recovery_bonus: 0.5 };
  const steps = [step(0), step(1, { error: 'No such file' }), step(2, { error: 'again' }), step(3), step(4)];

  it('pays the recovery bonus once, on the first working call after a failed one, in an episode that succeeded', () => {
    expect(episodeBonuses(trajectory({ steps, success: true }), w)).toEqual([0, 0, 0, 0.5, 0]);
  });

  it('pays no recovery bonus in a failed episode: failing on purpose and then calling right earns nothing', () => {
    expect(episodeBonuses(trajectory({ steps, success: false }), w)).toEqual([0, 0, 0, 0, 0]);
  });

  it('pays a second recovery after a second failure, and adds the per-step bonuses', () => {
    const twice = [...steps, step(5, { error: 'x' }), step(6, { thought: LONG })];
    const bonuses = episodeBonuses(trajectory({ steps: twice, success: true }), { ...W, recovery_bonus: 0.5 });
    expect(bonuses.map((b) => Number(b.toFixed(6)))).toEqual([0.05, 0, 0, 0.55, 0.05, 0, 0.57]);
  });
});
