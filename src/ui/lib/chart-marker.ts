/** A run event drawn as a vertical line on a chart's step axis. */
export interface ChartMarker {
  step: number;
  kind: 'curriculum' | 'regression';
  label: string;
}

/** A marker label to place: its line's x and its text's width, in canvas pixels. */
export interface MarkerLabelBox {
  x: number;
  width: number;
}

/** Where a marker label goes: the x its text starts at and its row (0 at the top of the plot, each one a line lower). */
export interface MarkerLabelPlace {
  left: number;
  row: number;
}

/**
 * Places marker labels so that none overlaps another: each starts just right of its line (left of it
 * when it would run past `right`, the plot's right edge), on the first row where it clears every label
 * already there by `gap`. Markers a few steps apart (a curriculum change, then a regression) would
 * otherwise print their labels over each other at the top of the chart. Places are in `boxes`' order.
 */
export function placeMarkerLabels(boxes: readonly MarkerLabelBox[], right: number, gap = 3): MarkerLabelPlace[] {
  const rowEnds: number[] = [];
  const order = boxes.map((_, i) => i).sort((a, b) => boxes[a].x - boxes[b].x);
  const places: MarkerLabelPlace[] = new Array(boxes.length);
  for (const i of order) {
    const { x, width } = boxes[i];
    const left = x + gap + width > right ? x - gap - width : x + gap;
    let row = rowEnds.findIndex((end) => end + gap <= left);
    if (row < 0) row = rowEnds.push(left + width) - 1;
    else rowEnds[row] = left + width;
    places[i] = { left, row };
  }
  return places;
}
