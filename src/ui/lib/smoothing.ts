/**
 * Exponential moving average of a curve, as W&B and TensorBoard smooth one: each point is the
 * weighted mean of the points so far, weights decaying by `weight` per step, and debiased so the first
 * points are not pulled towards 0. Gaps (null) stay gaps and do not reset the average, because held-out
 * and sparse metrics are logged only at some steps.
 */
export function emaSmooth(values: readonly (number | null)[], weight: number): (number | null)[] {
  const w = Math.min(Math.max(weight, 0), 0.999);
  if (w === 0) return [...values];
  let sum = 0;
  let norm = 0;
  return values.map((v) => {
    if (v === null || !Number.isFinite(v)) return null;
    sum = w * sum + (1 - w) * v;
    norm = w * norm + (1 - w);
    return sum / norm;
  });
}
