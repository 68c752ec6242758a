/**
 * How each series of a chart is drawn: a line in its own colour, a faint raw curve under its smoothed
 * one, a dashed line for a compared run, or one edge of a shaded interval band. Pure, so the choice of
 * colours, legend entries and bands is tested without a canvas.
 */
export interface SeriesSpec {
  label: string;
  /** Takes the colour of the series at this index (a raw curve, a band, a compared run share it). */
  colorOf?: number;
  /** Thin and pale: the raw curve kept under its smoothed one. */
  faint?: boolean;
  /** Dashed: another run, drawn for comparison. */
  dashed?: boolean;
  /** One edge of the interval band around the series at `of`; not a line, not in the legend. */
  band?: { of: number; edge: 'low' | 'high' };
}

export const CHART_COLORS = ['#2f6f5e', '#b86b2d', '#4a5fa8', '#a23b72', '#6b8e23', '#7a5c3e'];

/** The colour of series `i`: its own slot in the palette, counted over the series that have one. */
export function seriesColor(specs: readonly SeriesSpec[], i: number): string {
  const spec = specs[i];
  const owner = spec.band ? spec.band.of : (spec.colorOf ?? i);
  if (owner !== i) return seriesColor(specs, owner);
  const slot = specs.slice(0, i).filter((s) => !s.band && s.colorOf === undefined).length;
  return CHART_COLORS[slot % CHART_COLORS.length];
}

/** The indexes of the series the legend lists (band edges are part of their line's entry). */
export function legendSeries(specs: readonly SeriesSpec[]): number[] {
  return specs.flatMap((s, i) => (s.band ? [] : [i]));
}

/** uPlot's bands: the area between each line's high and low edge, 1-based as uPlot counts series. */
export function intervalBands(specs: readonly SeriesSpec[]): { series: [number, number]; fill: string }[] {
  const bands: { series: [number, number]; fill: string }[] = [];
  specs.forEach((s, high) => {
    if (s.band?.edge !== 'high') return;
    const low = specs.findIndex((t) => t.band?.of === s.band!.of && t.band.edge === 'low');
    if (low >= 0) bands.push({ series: [high + 1, low + 1], fill: `${seriesColor(specs, high)}2e` });
  });
  return bands;
}
