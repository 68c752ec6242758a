/**
 * Deterministic randomness for task generation and rollouts: a seeded mulberry32 generator with the
 * helpers generators need (integers in a range, picks, shuffles), a string hash, and a way to derive
 * independent seeds from a base seed and labels ("randomness is an argument", DESIGN.md).
 *
 * mulberry32 is the same algorithm as src/train/rng.ts, so a seed means the same stream everywhere.
 * Not for cryptography.
 */

export interface Rng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [lo, hi], both inclusive. */
  int(lo: number, hi: number): number;
  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T;
  /** A shuffled copy (Fisher–Yates). */
  shuffle<T>(items: readonly T[]): T[];
  /** True with probability p. */
  chance(p: number): boolean;
}

/** One mulberry32 step: the next 32-bit state and the float in [0, 1) it yields. Shared with src/train/rng.ts. */
export function mulberry32(state: number): { state: number; value: number } {
  const next = (state + 0x6d2b79f5) >>> 0;
  let t = next;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return { state: next, value: ((t ^ (t >>> 14)) >>> 0) / 4294967296 };
}

/** A mulberry32 generator seeded with a 32-bit integer (other numbers are hashed to one). */
export function createRng(seed: number): Rng {
  let s = toUint32(seed);
  const next = (): number => {
    const step = mulberry32(s);
    s = step.state;
    return step.value;
  };
  const int = (lo: number, hi: number): number => {
    if (!Number.isInteger(lo) || !Number.isInteger(hi) || hi < lo) throw new RangeError(`rng.int(${lo}, ${hi}): need integers with lo <= hi`);
    return lo + Math.floor(next() * (hi - lo + 1));
  };
  return {
    next,
    int,
    pick<T>(items: readonly T[]): T {
      if (items.length === 0) throw new RangeError('rng.pick: empty array');
      return items[Math.floor(next() * items.length)];
    },
    shuffle<T>(items: readonly T[]): T[] {
      const out = items.slice();
      for (let i = out.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [out[i], out[j]] = [out[j], out[i]];
      }
      return out;
    },
    chance: (p) => next() < p,
  };
}

/** 32-bit FNV-1a of a string, mixed with a final avalanche so nearby strings spread over [0, 2^32). */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A seed derived from a base seed and labels: the same inputs always give the same seed. */
export function deriveSeed(base: number, ...parts: (string | number)[]): number {
  return hashString([toUint32(base), ...parts].join('\u0000'));
}

function toUint32(seed: number): number {
  if (Number.isInteger(seed) && seed >= 0 && seed <= 0xffffffff) return seed;
  if (!Number.isFinite(seed)) throw new RangeError(`seed must be a finite number, got ${seed}`);
  return hashString(String(seed));
}
