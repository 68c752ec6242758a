/**
 * What a chart's caption reads out: the values at the step under the cursor, or, with no cursor, each
 * series' latest value (series may have gaps: held-out success is logged only every eval_interval).
 */
export interface Readout {
  /** The step the values belong to (the latest step when each series' latest value is shown). */
  step: number | null;
  values: (number | null)[];
}

/** `data` is uPlot's [steps, ...series]; `index` the cursor's column, or null when it is off the chart. */
export function chartReadout(data: readonly ArrayLike<number | null | undefined>[], index: number | null): Readout {
  const [steps, ...series] = data;
  if (steps.length === 0) return { step: null, values: series.map(() => null) };
  if (index !== null && index >= 0 && index < steps.length) {
    return { step: steps[index] ?? null, values: series.map((s) => s[index] ?? null) };
  }
  return { step: steps[steps.length - 1] ?? null, values: series.map(lastValue) };
}

function lastValue(column: ArrayLike<number | null | undefined>): number | null {
  for (let i = column.length - 1; i >= 0; i--) {
    const v = column[i];
    if (v !== null && v !== undefined && !Number.isNaN(v)) return v;
  }
  return null;
}
