/**
 * Seeded randomness for everything the model draws (initial weights, LoRA init, sampling), in plain
 * JS so the same seed gives the same numbers on every backend and in every environment.
 */

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Standard normal. */
  normal(): number;
}

/** Mixes integers into one 32-bit seed (so `deriveSeed(seed, row)` gives independent streams). */
export function deriveSeed(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const p of parts) {
    h = Math.imul(h ^ (p >>> 0), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return h >>> 0;
}

/** mulberry32: small, fast, and good enough for sampling and initialisation. */
export function createRng(seed: number): Rng {
  let state = deriveSeed(seed) | 0;
  let spare: number | null = null;
  const next = (): number => {
    state = (state + 0x6d2b79f5) | 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const normal = (): number => {
    if (spare !== null) {
      const s = spare;
      spare = null;
      return s;
    }
    // Box–Muller; 1 - u keeps the log argument in (0, 1].
    const u = 1 - next();
    const v = next();
    const r = Math.sqrt(-2 * Math.log(u));
    spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  };
  return { next, normal };
}

export function normalArray(rng: Rng, size: number, std: number): Float32Array {
  const out = new Float32Array(size);
  for (let i = 0; i < size; i++) out[i] = rng.normal() * std;
  return out;
}

export function uniformArray(rng: Rng, size: number, bound: number): Float32Array {
  const out = new Float32Array(size);
  for (let i = 0; i < size; i++) out[i] = (rng.next() * 2 - 1) * bound;
  return out;
}
