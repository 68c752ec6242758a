import { describe, expect, it } from 'vitest';
import { chartReadout } from '../../src/ui/lib/chart-readout.ts';

describe('chartReadout', () => {
  const data = [
    [1, 2, 3],
    [0.1, 0.2, 0.3],
    [0.5, null, null],
  ];

  it('reads the column under the cursor, gaps as null', () => {
    expect(chartReadout(data, 1)).toEqual({ step: 2, values: [0.2, null] });
  });

  it('without a cursor, reads each series at its latest value (past a gap)', () => {
    expect(chartReadout(data, null)).toEqual({ step: 3, values: [0.3, 0.5] });
    expect(chartReadout(data, 7)).toEqual({ step: 3, values: [0.3, 0.5] });
  });

  it('has nothing to read on an empty chart', () => {
    expect(chartReadout([[], []], null)).toEqual({ step: null, values: [null] });
  });
});
