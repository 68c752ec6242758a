import { describe, expect, it } from 'vitest';
import { placeMarkerLabels, type MarkerLabelBox, type MarkerLabelPlace } from '../../src/ui/lib/chart-marker.ts';
import { distinctValueLabels, valueAxisWidth } from '../../src/ui/lib/axis-ticks.ts';

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

describe('valueAxisWidth', () => {
  it('keeps the usual width for short labels and widens for long ones, so no label is cut', () => {
    expect(valueAxisWidth(['0', '0.5', '1'])).toBe(44);
    expect(valueAxisWidth(['5.5755', '5.576', '5.5765'])).toBe(56);
    expect(valueAxisWidth(['-12.1393'])).toBeGreaterThan(valueAxisWidth(['5.5755']));
    expect(valueAxisWidth(null)).toBe(44);
  });
});

describe('distinctValueLabels', () => {
  it('uses the fewest decimals that tell every tick apart', () => {
    expect(distinctValueLabels([0, 0.5, 1])).toEqual(['0', '0.5', '1']);
    expect(distinctValueLabels([-0.5, 0])).toEqual(['-0.5', '0']);
    expect(distinctValueLabels([5.5755, 5.576, 5.5765])).toEqual(['5.5755', '5.576', '5.5765']);
    expect(distinctValueLabels([1000, 2000])).toEqual(['1000', '2000']);
  });
});
