/**
 * Reading JSON Lines, once for every reader (trajectory imports, task files, SFT data, calibration
 * sets, the app's pasted lists): one JSON value per line, `\n` or `\r\n` separated, blank lines skipped,
 * each line numbered from 1. What a bad line means (stop, or collect every problem) is the caller's.
 */

export interface JsonlLine {
  /** 1-based line number in the text. */
  line: number;
  /** The line as written (trimmed). */
  text: string;
  /** The parsed value; undefined when `error` is set. */
  value: unknown;
  /** Why the line is not JSON (`not valid JSON (…)`), or null. */
  error: string | null;
}

export function jsonlLines(text: string): JsonlLine[] {
  return [...eachJsonlLine(text)];
}

/** The same lines one at a time, each parsed only when reached: a reader that stops early never splits the rest. */
export function* eachJsonlLine(text: string): Generator<JsonlLine> {
  let start = 0;
  for (let index = 0; start <= text.length; index++) {
    const end = text.indexOf('\n', start);
    const stop = end < 0 ? text.length : end;
    const line = text.slice(start, stop).trim();
    start = stop + 1;
    if (!line) continue;
    yield parseLine(index + 1, line);
  }
}

function parseLine(line: number, text: string): JsonlLine {
  try {
    return { line, text, value: JSON.parse(text), error: null };
  } catch (e) {
    return { line, text, value: undefined, error: `not valid JSON (${e instanceof Error ? e.message : String(e)})` };
  }
}
