/**
 * A small seeded random number generator whose whole state is one number, so a checkpoint can
 * store it and a resumed run draws exactly the numbers the uninterrupted run would have drawn.
 *
 * Algorithm: mulberry32 (32-bit state, period 2^32). Good enough for sampling replay items and
 * shuffling SFT examples; not for cryptography.
 */

import { mulberry32 } from '../envs/rng.ts';

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
    const step = mulberry32(this.s);
    this.s = step.state;
    return step.value;
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
