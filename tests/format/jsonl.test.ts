/** The one JSON Lines reader: rows numbered by their line in the file, bad lines thrown or collected. */
import { describe, expect, it } from 'vitest';
import { collectJsonl, jsonlEntries, JsonlError, readJsonl } from '../../src/format/jsonl.ts';

const positive = (v: unknown) => (typeof v === 'number' && v > 0 ? null : 'must be a positive number');

describe('JSON Lines', () => {
  it('numbers each row by its line in the file: blank lines skipped but counted, \\r\\n read as \\n', () => {
    expect(readJsonl('1\n\n  \r\n{"a":2}\r\n3\n')).toEqual([
      { line: 1, value: 1 },
      { line: 4, value: { a: 2 } },
      { line: 5, value: 3 },
    ]);
    expect(readJsonl('')).toEqual([]);
  });

  it('throws at the first bad line, naming it; a caller makes its own error of it', () => {
    expect(() => readJsonl('1\n\n-2\nnope', positive)).toThrow(new JsonlError(3, 'must be a positive number'));
    expect(() => readJsonl('1\n\n-2', positive)).toThrow(/^line 3: must be a positive number$/);
    expect(() => readJsonl('1\n{', positive, (p) => new RangeError(`rows.jsonl:${p.line}`))).toThrow(RangeError);
  });

  it('says a last line that is not JSON and has no newline after it may be a truncated file', () => {
    expect(() => readJsonl('{"a":1}\n{"a":')).toThrow(/^line 2: not valid JSON \(.*\) \(the file may be truncated\)$/);
    expect(() => readJsonl('{"a":\n{"a":1}\n')).toThrow(/^line 1: not valid JSON \([^)]*\)$/);
  });

  it('collects every good row and every bad line, in file order', () => {
    const { rows, problems } = collectJsonl<number>('1\nx\n\n-1\n2', positive);
    expect(rows).toEqual([
      { line: 1, value: 1 },
      { line: 5, value: 2 },
    ]);
    expect(problems.map((p) => p.line)).toEqual([2, 4]);
    expect(problems[0].message).toMatch(/^not valid JSON/);
    expect(problems[1].message).toBe('must be a positive number');
  });

  it('reads lazily: a reader that stops at the first row parses no other line', () => {
    const seen: unknown[] = [];
    const first = jsonlEntries('\n7\n{broken', (v) => (seen.push(v), null)).next().value;
    expect(first).toEqual({ line: 2, value: 7, problem: null });
    expect(seen).toEqual([7]);
  });
});
