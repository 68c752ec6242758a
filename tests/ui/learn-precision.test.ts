/** The lesson's precision (src/ui/screens/learn/precision.ts) and the run picker's labels (src/ui/lib/run-labels.ts). */
import { describe, expect, it } from 'vitest';
import { runLabels } from '../../src/ui/lib/run-labels.ts';
import { reproducingDigits, show, showSigned } from '../../src/ui/screens/learn/precision.ts';

describe('reproducingDigits', () => {
  it('adds decimals until the formula worked from the shown inputs gives the shown result', () => {
    // (0.07 − 0.11666…) / 0.06892…: at 3 decimals (0.07 − 0.117) / 0.069 = −0.681, not the true −0.677.
    const scores = [0.07, 0.2, 0.08];
    const mean = scores.reduce((a, b) => a + b) / 3;
    const std = Math.sqrt(scores.reduce((a, x) => a + (x - mean) ** 2, 0) / 2);
    const check = {
      inputs: [0.07, mean, std],
      compute: ([x, m, s]: number[]) => (x - m) / s,
      result: (0.07 - mean) / std,
      resultDigits: 3,
    };
    const d = reproducingDigits([check]);
    expect(d).toBeGreaterThan(3);
    const shown = [0.07, mean, std].map((x) => Number(show(x, d).replace('−', '-')));
    expect(show((shown[0] - shown[1]) / shown[2], 3)).toBe(show(check.result, 3));
    const at3 = [0.07, mean, std].map((x) => Number(show(x, 3)));
    expect(show((at3[0] - at3[1]) / at3[2], 3)).not.toBe(show(check.result, 3));
    // A mean shown like its scores: the result takes the inputs' decimals.
    expect(
      reproducingDigits([{ inputs: [1, 0.5], compute: ([a, b]) => (a + b) / 2, result: 0.75, resultDigits: null }]),
    ).toBe(3);
    expect(reproducingDigits([{ inputs: [Number.NaN], compute: () => 1, result: 1, resultDigits: 3 }])).toBe(3);
  });

  it('shows numbers without trailing zeros, with a typographic minus, and a dash when missing', () => {
    expect([
      show(0.5, 4),
      show(-0.12345, 4),
      show(10, 3),
      show(-0.00001, 3),
      show(1e-7, 8),
      show(null, 3),
      show(Number.NaN, 3),
    ]).toEqual(['0.5', '−0.1235', '10', '0', '0.0000001', '—', '—']);
    expect([showSigned(0.25, 3), showSigned(-0.25, 3), showSigned(0, 3)]).toEqual(['+0.25', '−0.25', '0']);
  });
});

describe('runLabels', () => {
  it('names runs by name, by id when unnamed, and adds the id when two runs share a name', () => {
    expect(
      runLabels([
        { id: 'r1', name: 'judged-run' },
        { id: 'r2', name: 'judged-run' },
        { id: 'r3', name: '' },
        { id: 'r4', name: 'solo' },
        { id: 'r5' },
      ]),
    ).toEqual(['judged-run (r1)', 'judged-run (r2)', 'r3', 'solo', 'r5']);
  });
});
