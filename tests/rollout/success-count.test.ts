import { describe, expect, it } from 'vitest';
import { countOf, formatSuccessCount } from '../../src/rollout/success-interval.ts';

describe('formatSuccessCount', () => {
  it('prints counts, the rate and the Wilson interval in whole percent', () => {
    expect(formatSuccessCount(17, 32)).toBe('17/32 = 53% [36, 69]');
    expect(formatSuccessCount(16, 32)).toBe('16/32 = 50% [34, 66]');
  });
  it('keeps the interval inside [0, 100] at the edges', () => {
    expect(formatSuccessCount(0, 10)).toBe('0/10 = 0% [0, 28]');
    expect(formatSuccessCount(10, 10)).toBe('10/10 = 100% [72, 100]');
  });
  it('does not invent a rate from no items', () => {
    expect(formatSuccessCount(0, 0)).toBe('0/0');
  });
});

describe('countOf', () => {
  it('uses the singular for one and the plural otherwise', () => {
    expect(countOf(1, 'problem')).toBe('1 problem');
    expect(countOf(2, 'problem')).toBe('2 problems');
    expect(countOf(0, 'problem')).toBe('0 problems');
  });
});
