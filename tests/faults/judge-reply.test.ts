/**
 * Faults: judge replies the score parser must read in linear time, and numbers read the way a number
 * parser reads them. Each reply's test has a timeout generous for a shared machine (vitest fails a
 * synchronous test that returns past it); a quadratic parser never finished on 200 KB of `{`.
 */
import { describe, expect, it } from 'vitest';
import { parseRubricScore } from '../../src/judge/parse-score.ts';

const BOUND_MS = 3000;

describe('the judge-reply parser runs in linear time', () => {
  const replies: Record<string, string> = {
    '1 MB of {': '{'.repeat(1 << 20),
    '1 MB of {"': '{"'.repeat(1 << 19),
    '1 MB of {}': '{}'.repeat(1 << 19),
    'nested objects that each fail at their end': '{"k":'.repeat(100_000) + '1' + ',}'.repeat(100_000),
    'overall followed by 1 MB of spaces': 'overall' + ' '.repeat(1 << 20),
    '1 MB of overall(': 'overall('.repeat(120_000),
  };
  for (const [what, reply] of Object.entries(replies)) {
    it(what, { timeout: BOUND_MS }, () => {
      expect(parseRubricScore(reply).score).toBeNull();
    });
  }

  it('finds the score after a 1 MB preamble of stray braces', () => {
    expect(parseRubricScore('{ '.repeat(1 << 19) + '{"overall": 0.25}').score).toBe(0.25);
  });
});

describe('judge scores parse as numbers', () => {
  it.each([
    ['{"overall": "1e-3"}', 0.001],
    ['{"overall": "5e-1"}', 0.5],
    ['{"overall": ".5"}', 0.5],
    ['{"overall": "8/10"}', 0.8],
    ['{"overall": "80%"}', 0.8],
    ['{"overall": "0.8 (good)"}', 0.8],
    ['Overall score: 5E-1', 0.5],
    ['final rating = 7.5/10', 0.75],
  ])('%s scores %d', (reply, score) => {
    expect(parseRubricScore(reply).score).toBeCloseTo(score, 12);
  });

  it.each([
    '{"overall": "1e"}',
    '{"overall": "1.2.3"}',
    '{"overall": "Infinity"}',
    '{"overall": "NaN"}',
    'overall: 1e',
    '{"overall": "2e0"}',
  ])('%s gives no score', (reply) => {
    expect(parseRubricScore(reply).score).toBeNull();
  });
});
