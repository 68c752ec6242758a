/** A run event drawn as a vertical line on a chart's step axis. */
export interface ChartMarker {
  step: number;
  kind: 'curriculum' | 'regression';
  label: string;
}
