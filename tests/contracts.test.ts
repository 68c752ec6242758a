import { describe, expect, it } from 'vitest';
import { isSuccess } from '../src/contracts.ts';

describe('isSuccess', () => {
  it('is full marks only, with room for float rounding; no score gives no verdict', () => {
    expect(isSuccess(1)).toBe(true);
    expect(isSuccess(0.7 + 0.2 + 0.1)).toBe(true); // 0.9999999999999999 in floats
    expect(isSuccess(0.999)).toBe(false);
    expect(isSuccess(0.99)).toBe(false);
    expect(isSuccess(0)).toBe(false);
    expect(isSuccess(null)).toBeNull();
  });
});
