/** The GRPO clip range and the one-sample surrogate (src/train/clip.ts) the loss and the Learn screen share. */
import { describe, expect, it } from 'vitest';
import { clippedObjective, clipRange } from '../../src/train/clip.ts';

describe('clip', () => {
  it('takes ε for both sides unless an upper ε is given', () => {
    expect(clipRange(0.2)).toEqual({ low: 0.8, high: 1.2 });
    expect(clipRange(0.2, 0.28)).toEqual({ low: 0.8, high: 1.28 });
  });

  it("stops a sample that moved past the range in its advantage's direction, and keeps the pessimistic side otherwise", () => {
    expect(clippedObjective(1.5, 2, 0.2)).toMatchObject({ clippedRatio: 1.2, objective: 2.4, isClipped: true });
    expect(clippedObjective(1.1, 2, 0.2)).toMatchObject({ objective: 2.2, isClipped: false });
    // A negative advantage whose ratio rose: the unclipped r·A is the smaller, so it keeps pushing down.
    expect(clippedObjective(1.5, -1, 0.2)).toMatchObject({ objective: -1.5, isClipped: false });
    expect(clippedObjective(0.5, -1, 0.2)).toMatchObject({ clippedRatio: 0.8, objective: -0.8, isClipped: true });
  });
});
