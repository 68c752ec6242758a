/** Numbers on screen: no float noise, no sixteen-digit fractions. */
import { describe, expect, it } from 'vitest';
import { formatNumber, formatSigned } from '../../src/ui/lib/format.ts';

describe('formatNumber', () => {
  it('shows float noise around zero as 0 and keeps small real values readable', () => {
    expect(formatNumber(2.97e-17)).toBe('0');
    expect(formatNumber(-4e-12)).toBe('0');
    expect(formatNumber(0.00042)).toBe('4.20e-4');
    expect(formatNumber(20 / 3, 1)).toBe('6.7');
    expect(formatNumber(null)).toBe('—');
    expect(formatSigned(-0.1749)).toBe('−0.17');
  });
});
