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

/**
 * How wide the value axis must be for its longest label, in CSS pixels: a fixed width cut the leading
 * digits off "5.5765" (an entropy that hardly moves). `charWidth` is a digit's width in the axis font.
 */
export function valueAxisWidth(labels: readonly string[] | null | undefined, charWidth = 7, minimum = 44): number {
  const longest = Math.max(0, ...(labels ?? []).map((l) => l.length));
  // Ticks and the gap beside the labels take about 14 px.
  return Math.max(minimum, Math.ceil(14 + charWidth * longest));
}

/**
 * Value-axis labels with as few decimals as the ticks need: "0", "0.5", "1"; and "5.5755", "5.576",
 * "5.5765" for a series that hardly moves, where a fixed precision printed "5.576" three times. A tick
 * is a multiple of its step, so some few decimals write each one (to well within a step).
 */
export function distinctValueLabels(splits: readonly number[], maxDecimals = 8): string[] {
  const gaps = splits.slice(1).map((s, i) => Math.abs(s - splits[i]));
  const step = Math.min(...gaps.filter((g) => g > 0), Infinity);
  const tolerance = Number.isFinite(step) ? step * 1e-3 : 1e-9;
  for (let d = 0; d <= maxDecimals; d++) {
    if (splits.every((s) => Math.abs(Number(s.toFixed(d)) - s) <= tolerance))
      return splits.map((s) => String(Number(s.toFixed(d))));
  }
  return splits.map((s) => String(s));
}
