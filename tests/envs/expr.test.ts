import { describe, expect, it } from 'vitest';
import { evaluateExact, ExpressionError, equalsInteger } from '../../src/envs/expr.ts';

describe('exact expressions', () => {
  it('evaluates with rationals and precedence', () => {
    expect(equalsInteger(evaluateExact('(3 * 7) + 25').value, 46)).toBe(true);
    expect(equalsInteger(evaluateExact('7 / 3 * 3').value, 7)).toBe(true);
    expect(equalsInteger(evaluateExact('10 - 2 - 3').value, 5)).toBe(true);
    expect(equalsInteger(evaluateExact('-(2 + 3) * 2').value, -10)).toBe(true);
    expect(evaluateExact('1 / 3').value).toEqual({ num: 1n, den: 3n });
  });

  it('lists the numbers used, in order', () => {
    expect(evaluateExact('(25 - 5) * 3').numbers).toEqual([25, 5, 3]);
  });

  it('rejects bad input with ExpressionError', () => {
    for (const bad of ['1 +', '2 ** 3', '1 / 0', 'abc', '(1 + 2', ''])
      expect(() => evaluateExact(bad), bad).toThrow(ExpressionError);
  });
});
