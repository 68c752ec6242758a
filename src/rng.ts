/**
 * The one source of seeded randomness (randomness is an argument, and there is one RNG): task
 * generation and splits (src/envs), rollouts, the model's initial weights, LoRA init and sampling
 * (src/model), replay draws and SFT shuffles (src/train). A seed means the same stream everywhere.
 *
 * The generator is mulberry32: its whole state is one 32-bit number, so a checkpoint can store it
 * (`state()`) and a resumed run draws exactly the numbers the uninterrupted run would have drawn.
 * `deriveSeed` turns a base seed and labels into an independent seed. Plain JS, so the same seed
 * gives the same numbers on every tfjs backend, in the browser and in Node. Not for cryptography.
 */

/** A generator's resumable state: the 32-bit mulberry32 state (an unsigned integer). */
export interface RngState {
  s: number;
}

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
  /** A standard normal draw (Box–Muller, two per pair of uniforms). */
  normal(): number;
  /** The state to resume from. A normal draw's unused spare is not part of it (resumable callers draw uniforms only). */
  state(): RngState;
}

/** A mulberry32 generator seeded with a 32-bit integer (other numbers are hashed to one), or resumed from a state. */
export function createRng(seed: number | RngState): Rng {
  let s = typeof seed === 'number' ? toUint32(seed) : seed.s >>> 0;
  let spare: number | null = null;
  const next = (): number => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number): number => {
    if (!Number.isInteger(lo) || !Number.isInteger(hi) || hi < lo)
      throw new RangeError(`rng.int(${lo}, ${hi}): need integers with lo <= hi`);
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
    normal(): number {
      if (spare !== null) {
        const value = spare;
        spare = null;
        return value;
      }
      // 1 - u keeps the log argument in (0, 1].
      const u = 1 - next();
      const v = next();
      const r = Math.sqrt(-2 * Math.log(u));
      spare = r * Math.sin(2 * Math.PI * v);
      return r * Math.cos(2 * Math.PI * v);
    },
    state: () => ({ s }),
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

/** `size` normal draws scaled by `std` (weight initialisation). */
export function normalArray(rng: Rng, size: number, std: number): Float32Array {
  const out = new Float32Array(size);
  for (let i = 0; i < size; i++) out[i] = rng.normal() * std;
  return out;
}

/** `size` uniform draws in [-bound, bound) (LoRA A initialisation). */
export function uniformArray(rng: Rng, size: number, bound: number): Float32Array {
  const out = new Float32Array(size);
  for (let i = 0; i < size; i++) out[i] = (rng.next() * 2 - 1) * bound;
  return out;
}

function toUint32(seed: number): number {
  if (Number.isInteger(seed) && seed >= 0 && seed <= 0xffffffff) return seed;
  if (!Number.isFinite(seed)) throw new RangeError(`seed must be a finite number, got ${seed}`);
  return hashString(String(seed));
}
