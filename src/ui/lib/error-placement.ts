/**
 * Where an editor puts an error's message so it covers no code: beside the marked line, after its last
 * character; else beside the line below it, when that one leaves room; else nowhere inline (the list
 * under the editor has it). Columns are character cells of the editor's monospace font, counted from
 * the start of the visible text (a tab reaches the next multiple of `tabSize`).
 */
export interface Placement {
  /** 0: on the marked line; 1: on the line below it. */
  row: 0 | 1;
  /** The visible column the message starts at. */
  column: number;
}

/** Cells a message needs at the least to be worth showing inline; a longer one is cut with an ellipsis. */
export const MIN_MESSAGE_COLUMNS = 24;
const GAP = 3;

export function textColumns(line: string, tabSize = 8): number {
  let column = 0;
  for (const ch of line) column = ch === '\t' ? (Math.floor(column / tabSize) + 1) * tabSize : column + 1;
  return column;
}

export function placeError(
  line: string,
  nextLine: string | null,
  visibleColumns: number,
  scrolledColumns = 0,
): Placement | null {
  for (const [row, text] of [
    [0, line],
    [1, nextLine],
  ] as const) {
    if (text === null) continue;
    const column = Math.max(0, textColumns(text) + GAP - scrolledColumns);
    if (visibleColumns - column >= MIN_MESSAGE_COLUMNS) return { row, column };
  }
  return null;
}
