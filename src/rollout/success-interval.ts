/**
 * The Wilson score interval for a success rate: honest at small n and near 0 or 1, where the normal
 * approximation gives intervals outside [0, 1]. Every success rate Spindle prints comes with one.
 */

/** The 95% (z = 1.96) Wilson interval [low, high] of `successes` out of `n`. */
export function wilsonInterval(successes: number, n: number, z = 1.96): [number, number] {
  if (n <= 0) return [0, 1];
  const p = successes / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}
