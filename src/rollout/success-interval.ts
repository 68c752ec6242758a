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

/**
 * A held-out result as counts with its interval, "17/32 = 53% [36, 69]": the count says how much
 * evidence stands behind the rate, which a bare 0.53 hides. The app and the CLI both print this.
 */
export function formatSuccessCount(successes: number, n: number): string {
  if (!(n > 0) || !Number.isFinite(successes)) return `${successes}/${n}`;
  const [low, high] = wilsonInterval(successes, n);
  const pct = (x: number) => Math.round(100 * x);
  return `${successes}/${n} = ${pct(successes / n)}% [${pct(low)}, ${pct(high)}]`;
}

/** "1 problem", "2 problems": counts read as words, not "problem(s)". */
export function countOf(n: number, word: string, plural = `${word}s`): string {
  return `${n} ${n === 1 ? word : plural}`;
}
