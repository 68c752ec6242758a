import { describe, expect, it } from 'vitest';
import { placeMarkerLabels, type MarkerLabelBox, type MarkerLabelPlace } from '../../src/ui/lib/chart-marker.ts';

/** True when two placed labels share a row and their text spans overlap. */
function overlap(boxes: MarkerLabelBox[], places: MarkerLabelPlace[], i: number, j: number): boolean {
  if (places[i].row !== places[j].row) return false;
  const [a, b] = [places[i].left, places[j].left];
  return a < b + boxes[j].width && b < a + boxes[i].width;
}

describe('placeMarkerLabels', () => {
  it('keeps labels far apart on the top row, just right of their lines', () => {
    const boxes = [
      { x: 10, width: 40 },
      { x: 100, width: 40 },
    ];
    expect(placeMarkerLabels(boxes, 500)).toEqual([
      { left: 13, row: 0 },
      { left: 103, row: 0 },
    ]);
  });

  it('moves a label that would overlap its neighbour down a row, and back up once there is room', () => {
    const boxes = [
      { x: 10, width: 60 },
      { x: 30, width: 60 },
      { x: 50, width: 60 },
      { x: 80, width: 30 },
    ];
    const places = placeMarkerLabels(boxes, 500);
    expect(places.map((p) => p.row)).toEqual([0, 1, 2, 0]);
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++) expect(overlap(boxes, places, i, j), `${i} and ${j}`).toBe(false);
  });

  it('places labels in the order given, whatever the order of their steps', () => {
    const boxes = [
      { x: 30, width: 60 },
      { x: 10, width: 60 },
    ];
    expect(placeMarkerLabels(boxes, 500)).toEqual([
      { left: 33, row: 1 },
      { left: 13, row: 0 },
    ]);
  });

  it('puts a label that would run past the right edge on the left of its line', () => {
    const places = placeMarkerLabels([{ x: 480, width: 50 }], 500);
    expect(places).toEqual([{ left: 427, row: 0 }]);
  });
});
