import { describe, expect, it } from 'vitest';
import { createRng, deriveSeed, hashString } from '../../src/envs/rng.ts';
import { Rng as TrainRng } from '../../src/train/rng.ts';
import { evaluateExact, ExpressionError, equalsInteger } from '../../src/envs/expr.ts';

describe('rng', () => {
  it('replays the same stream for the same seed and differs across seeds', () => {
    const a = createRng(42);
    const b = createRng(42);
    const c = createRng(43);
    const sa = Array.from({ length: 20 }, () => a.next());
    expect(Array.from({ length: 20 }, () => b.next())).toEqual(sa);
    expect(Array.from({ length: 20 }, () => c.next())).not.toEqual(sa);
  });

  it('is the same mulberry32 stream as src/train/rng.ts', () => {
    const mine = createRng(7);
    const theirs = new TrainRng(7);
    for (let i = 0; i < 10; i++) expect(mine.next()).toBe(theirs.next());
  });

  it('int stays within inclusive bounds and hits both ends', () => {
    const rng = createRng(1);
    const seen = new Set<number>();
    for (let i = 0; i < 2000; i++) {
      const v = rng.int(3, 7);
      expect(v).toBeGreaterThanOrEqual(3);
      expect(v).toBeLessThanOrEqual(7);
      seen.add(v);
    }
    expect([...seen].sort()).toEqual([3, 4, 5, 6, 7]);
    expect(() => rng.int(5, 4)).toThrow(/lo <= hi/);
  });

  it('shuffle keeps the elements; pick throws on empty', () => {
    const rng = createRng(9);
    expect(rng.shuffle([1, 2, 3, 4, 5]).sort()).toEqual([1, 2, 3, 4, 5]);
    expect(() => rng.pick([])).toThrow(/empty/);
  });

  it('deriveSeed and hashString are deterministic and spread', () => {
    expect(deriveSeed(1, 'a', 2)).toBe(deriveSeed(1, 'a', 2));
    expect(deriveSeed(1, 'a', 2)).not.toBe(deriveSeed(1, 'a', 3));
    expect(hashString('x')).not.toBe(hashString('y'));
    expect(createRng(1.5).next()).toBe(createRng(1.5).next());
  });
});

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
    for (const bad of ['1 +', '2 ** 3', '1 / 0', 'abc', '(1 + 2', '']) expect(() => evaluateExact(bad), bad).toThrow(ExpressionError);
  });
});
