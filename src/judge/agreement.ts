/**
 * Agreement statistics for judge calibration: Spearman rank correlation, mean absolute error, and
 * Krippendorff's alpha (interval metric) across judges with missing votes.
 */

/** Ranks 1..n, ties sharing their average rank. */
export function ranks(values: number[]): number[] {
  const order = values.map((v, i) => [v, i] as const).sort((a, b) => a[0] - b[0]);
  const out = new Array<number>(values.length);
  for (let i = 0; i < order.length;) {
    let j = i;
    while (j + 1 < order.length && order[j + 1][0] === order[i][0]) j++;
    const avg = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) out[order[k][1]] = avg;
    i = j + 1;
  }
  return out;
}

function pearson(xs: number[], ys: number[]): number | null {
  const n = xs.length;
  if (n < 2 || ys.length !== n) return null;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i] - mx) * (ys[i] - my);
    sxx += (xs[i] - mx) ** 2;
    syy += (ys[i] - my) ** 2;
  }
  if (sxx === 0 || syy === 0) return null;
  return sxy / Math.sqrt(sxx * syy);
}

/** Spearman's rho (Pearson on average ranks); null when either side is constant or n < 2. */
export function spearman(xs: number[], ys: number[]): number | null {
  return pearson(ranks(xs), ranks(ys));
}

export function meanAbsoluteError(predicted: number[], gold: number[]): number | null {
  if (predicted.length === 0 || predicted.length !== gold.length) return null;
  return predicted.reduce((s, p, i) => s + Math.abs(p - gold[i]), 0) / predicted.length;
}

/**
 * Krippendorff's alpha with the interval metric. `ratings[unit][coder]` is a score or null (missing).
 * Units with fewer than two ratings are not pairable and are skipped. alpha = 1 − D_o / D_e, with
 * D_o = (1/n) Σ_u 1/(m_u − 1) Σ_{i≠j in u} (v_i − v_j)², D_e = 1/(n(n − 1)) Σ_{i≠j over all pairable
 * values} (v_i − v_j)², n the number of pairable values. Null when there is no disagreement to expect.
 */
export function krippendorffAlphaInterval(ratings: (number | null)[][]): number | null {
  const units = ratings
    .map((u) => u.filter((v): v is number => v !== null && Number.isFinite(v)))
    .filter((u) => u.length >= 2);
  const all = units.flat();
  const n = all.length;
  if (n < 2) return null;
  let observed = 0;
  for (const u of units) {
    let s = 0;
    for (let i = 0; i < u.length; i++) for (let j = 0; j < u.length; j++) if (i !== j) s += (u[i] - u[j]) ** 2;
    observed += s / (u.length - 1);
  }
  observed /= n;
  // Σ_{i≠j} (v_i − v_j)² = 2n Σ v² − 2 (Σ v)², computed without the O(n²) loop.
  const sum = all.reduce((a, b) => a + b, 0);
  const sumSq = all.reduce((a, b) => a + b * b, 0);
  const expected = (2 * n * sumSq - 2 * sum * sum) / (n * (n - 1));
  if (expected <= 0) return null;
  return 1 - observed / expected;
}
