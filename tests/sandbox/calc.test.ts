import { describe, expect, it } from 'vitest';
import { CalcError, evaluateArithmetic } from '../../src/sandbox/index.ts';

describe('calc evaluator (arithmetic only, no eval)', () => {
  it.each([
    ['1 + 2 * 3', 7],
    ['(1 + 2) * 3', 9],
    ['10 / 4', 2.5],
    ['7 % 3', 1],
    ['2 ** 3 ** 2', 512],
    ['-2 ** 2', -4],
    ['2 ** -1', 0.5],
    ['--3', 3],
    ['-(4 - 6) * .5', 1],
    ['0.1 + 0.2', 0.3],
    ['1e3 + 1', 1001],
    ['  ((12.5)) ', 12.5],
  ])('%s = %s', (expr, expected) => {
    expect(evaluateArithmetic(expr)).toBe(expected);
  });

  it.each([
    ['2 ^ 3', /use \*\* for powers/],
    ['1 / 0', /division by zero/],
    ['5 % 0', /division by zero/],
    ['(1 + 2', /missing '\)'/],
    ['1 +', /ends too early/],
    ['', /empty/],
    ['Math.max(1, 2)', /unexpected character 'M'/],
    ['process.exit()', /unexpected character/],
    ['1 2', /unexpected '2'/],
    ['10 ** 400', /not a finite number/],
    ['('.repeat(150) + '1' + ')'.repeat(150), /nested deeper/],
    ['1+'.repeat(600) + '1', /longer than/],
  ])('rejects %s', (expr, message) => {
    expect(() => evaluateArithmetic(expr)).toThrow(CalcError);
    expect(() => evaluateArithmetic(expr)).toThrow(message);
  });
});
