/**
 * A diverging colour scale for signed values (advantages, per-token contributions): red for
 * "pushed down", neutral for zero, green for "pushed up". Colours stay light enough to read ink on.
 */

const NEGATIVE = [179, 38, 30];
const POSITIVE = [47, 125, 50];

/** Background colour for `value`, saturating at `maxAbs`. Null gives no colour (prompt/tool tokens). */
export function divergingColor(value: number | null, maxAbs: number): string {
  if (value === null || !Number.isFinite(value) || maxAbs <= 0) return 'transparent';
  const t = Math.min(1, Math.abs(value) / maxAbs);
  const [r, g, b] = value < 0 ? NEGATIVE : POSITIVE;
  // Alpha up to 0.55 keeps dark ink readable on the strongest colour.
  return `rgba(${r}, ${g}, ${b}, ${(0.08 + 0.47 * t).toFixed(3)})`;
}

/** The largest magnitude among values, for a symmetric scale; 1 when there are none. */
export function symmetricRange(values: readonly (number | null)[]): number {
  let max = 0;
  for (const v of values) if (v !== null && Number.isFinite(v)) max = Math.max(max, Math.abs(v));
  return max > 0 ? max : 1;
}
