import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/train/rng.ts';

describe('rng', () => {
  it('resumes from its state with the same numbers', () => {
    const a = new Rng(42);
    a.next();
    const b = new Rng(a.state());
    expect([a.next(), a.next(), a.int(10)]).toEqual([b.next(), b.next(), b.int(10)]);
  });

  it('draws in [0, 1) with a roughly uniform mean', () => {
    const r = new Rng(1);
    let sum = 0;
    for (let i = 0; i < 10_000; i++) {
      const x = r.next();
      expect(x >= 0 && x < 1).toBe(true);
      sum += x;
    }
    expect(Math.abs(sum / 10_000 - 0.5)).toBeLessThan(0.02);
  });

  it('shuffles a copy deterministically', () => {
    const xs = [1, 2, 3, 4, 5];
    const s = new Rng(9).shuffled(xs);
    expect(s.slice().sort()).toEqual(xs);
    expect(new Rng(9).shuffled(xs)).toEqual(s);
    expect(xs).toEqual([1, 2, 3, 4, 5]);
  });
});
