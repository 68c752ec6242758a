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
  const out: JsonlLine[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (!line) return;
    try {
      out.push({ line: index + 1, text: line, value: JSON.parse(line), error: null });
    } catch (e) {
      out.push({ line: index + 1, text: line, value: undefined, error: `not valid JSON (${e instanceof Error ? e.message : String(e)})` });
    }
  });
  return out;
}
