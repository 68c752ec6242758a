/** Catalog data for countdown: number pools and sizes per difficulty level, and the question wording. */

export interface CountdownLevel {
  /** How many numbers are given. */
  count: number;
  /** Pool the numbers are drawn from (with repetition across draws, as in the TV game's small numbers). */
  pool: number[];
  /** Smallest target worth asking. */
  minTarget: number;
  maxTarget: number;
}

const SMALL = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
const WITH_LARGE = [...SMALL, 25, 50, 75, 100];

export const COUNTDOWN_LEVELS: Record<number, CountdownLevel> = {
  1: { count: 3, pool: SMALL, minTarget: 2, maxTarget: 60 },
  2: { count: 3, pool: SMALL, minTarget: 5, maxTarget: 200 },
  3: { count: 4, pool: SMALL, minTarget: 10, maxTarget: 500 },
  4: { count: 5, pool: WITH_LARGE, minTarget: 20, maxTarget: 999 },
  5: { count: 6, pool: WITH_LARGE, minTarget: 100, maxTarget: 999 },
};

export const COUNTDOWN_PROMPT =
  'Make {target} from {numbers} using + - * / (each number at most once). Answer with the expression.';
