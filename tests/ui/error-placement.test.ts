import { describe, expect, it } from 'vitest';
import { MIN_MESSAGE_COLUMNS, placeError, textColumns } from '../../src/ui/lib/error-placement.ts';

describe('placeError', () => {
  it('puts the message after the marked line’s text, never over it', () => {
    expect(placeError('  const x = {{', null, 100)).toEqual({ row: 0, column: 17 });
  });

  it('goes beside the next line when the marked one leaves no room, and inline nowhere when neither does', () => {
    const long = 'x'.repeat(90);
    expect(placeError(long, '};', 100)).toEqual({ row: 1, column: 5 });
    expect(placeError(long, long, 100)).toBeNull();
    expect(placeError(long, null, 100)).toBeNull();
  });

  it('counts from the visible text when the editor is scrolled sideways, and needs room for a readable message', () => {
    const line = 'y'.repeat(60);
    expect(placeError(line, null, 70)).toBeNull();
    expect(placeError(line, null, 70, 40)).toEqual({ row: 0, column: 23 });
    expect(placeError('', null, MIN_MESSAGE_COLUMNS + 3)).toEqual({ row: 0, column: 3 });
  });

  it('a tab reaches the next multiple of the tab size', () => {
    expect(textColumns('\tx')).toBe(9);
    expect(textColumns('ab\tc', 4)).toBe(5);
  });
});
