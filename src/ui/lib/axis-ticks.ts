/**
 * Tick steps for an axis of update numbers: whole numbers only, so a run of 5 updates is marked
 * 1, 2, 3, 4, 5 and never 1.5. uPlot picks the smallest step in this list that leaves room between labels.
 */
export const WHOLE_NUMBER_INCREMENTS: number[] = (() => {
  const steps: number[] = [];
  for (let scale = 1; scale <= 1e9; scale *= 10) steps.push(scale, 2 * scale, 5 * scale);
  return steps;
})();

/** Tick labels for whole-number splits: "12", never "12.0". */
export function wholeNumberLabels(splits: readonly number[]): string[] {
  return splits.map((s) => (Number.isInteger(s) ? String(s) : ''));
}
