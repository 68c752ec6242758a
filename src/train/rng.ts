/**
 * A small seeded random number generator whose whole state is one number, so a checkpoint can
 * store it and a resumed run draws exactly the numbers the uninterrupted run would have drawn.
 *
 * Algorithm: mulberry32 (32-bit state, period 2^32). Good enough for sampling replay items and
 * shuffling SFT examples; not for cryptography.
 */

export interface RngState {
  /** The 32-bit state (an unsigned integer). */
  s: number;
}

export class Rng {
  private s: number;

  constructor(seed: number | RngState) {
    this.s = (typeof seed === 'number' ? seed : seed.s) >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Fisher–Yates shuffle of a copy. */
  shuffled<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [out[i], out[j]] = [out[j], out[i]];
    }
    return out;
  }

  state(): RngState {
    return { s: this.s };
  }
}
