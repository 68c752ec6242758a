import { describe, expect, it } from 'vitest';
import { stepBonus } from '../../src/train/process-rewards.ts';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import { step } from './fixtures.ts';

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
    const w = { tool_success_bonus: 0.1, thought_bonus: 0.5, thought_min_chars: 3 };
    expect(stepBonus(step(0, { thought: 'abcd' }), w)).toBeCloseTo(0.6, 12);
  });
});
