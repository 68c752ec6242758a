/**
 * Catalog data for long_plan: how long the route is per level, the locker numbers, and wording. The
 * route alternates two tools (calc works out a locker number, sh reads that locker), so a route of k
 * lockers takes 2k dependent calls.
 */

/** Lockers on the route per level: 2k calls each (4, 6, 8, 10 and 12). */
export const PLAN_LOCKERS: Record<number, number> = { 1: 2, 2: 3, 3: 4, 4: 5, 5: 6 };
/** Lockers off the route (dead ends with other words, or naming another dead end). */
export const PLAN_DECOYS = 4;
/** Locker numbers: two digits, so a number never hides inside another. */
export const LOCKER_RANGE: [number, number] = [10, 99];
/** Operands of a note's sum or difference, and the factors of a product. */
export const ADD_RANGE: [number, number] = [2, 40];
export const FACTOR_RANGE: [number, number] = [2, 11];
export const lockerFile = (n: number): string => `lockers/${n}.txt`;
export const PLAN_PROMPT =
  'Start at locker {expr} (lockers/<number>.txt). Each locker names the next; work out every number with calc. What word is in the last one?';
