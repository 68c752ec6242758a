/**
 * Reading JSON Lines, the one reader behind every file of rows (trajectory, Atropos and skill imports, task
 * files, SFT data, calibration sets): one JSON value per line, `\n` or `\r\n` separated, blank lines
 * skipped, every row numbered by its 1-based line in the file (blank lines counted), so an error points at
 * the line a user opens. A bad line (not JSON, or refused by the caller's check) stops the read
 * (`readJsonl`, which throws) or is collected beside the good rows (`collectJsonl`, for a screen that shows
 * every problem at once); `jsonlEntries` gives the same entries one at a time, for a reader that stops early.
 */

export interface JsonlRow<T = unknown> {
  /** 1-based line number in the file. */
  line: number;
  value: T;
}

export interface JsonlProblem {
  line: number;
  /** What is wrong with the line, and what it should be. */
  message: string;
}

/** What is wrong with a parsed row, or null when it is a good one. */
export type RowCheck = (value: unknown) => string | null;

/** One non-blank line: its row, or why it is none. */
export type JsonlEntry = (JsonlRow & { problem: null }) | { line: number; value: undefined; problem: string };

/** The error `readJsonl` throws by default: `line N: problem`. */
export class JsonlError extends Error {
  constructor(
    readonly line: number,
    readonly problem: string,
  ) {
    super(`line ${line}: ${problem}`);
    this.name = 'JsonlError';
  }
}

const anyRow: RowCheck = () => null;

/** The entries one at a time, each line parsed and checked only when reached: a reader that stops early never reads the rest. */
export function* jsonlEntries(text: string, check: RowCheck = anyRow): Generator<JsonlEntry> {
  let start = 0;
  for (let line = 1; start <= text.length; line++) {
    const end = text.indexOf('\n', start);
    const stop = end < 0 ? text.length : end;
    const trimmed = text.slice(start, stop).trim();
    start = stop + 1;
    if (trimmed) yield entry(line, trimmed, end < 0, check);
  }
}

function entry(line: number, text: string, last: boolean, check: RowCheck): JsonlEntry {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    // A last line cut short is the usual way a file breaks: a copy or a download that stopped.
    const hint = last ? ' (the file may be truncated)' : '';
    return { line, value: undefined, problem: `not valid JSON (${e instanceof Error ? e.message : String(e)})${hint}` };
  }
  const problem = check(value);
  return problem === null ? { line, value, problem } : { line, value: undefined, problem };
}

/** Every row, in order; the first bad line throws the error `fail` makes of it (a JsonlError by default). */
export function readJsonl<T>(
  text: string,
  check: RowCheck = anyRow,
  fail: (problem: JsonlProblem) => Error = (p) => new JsonlError(p.line, p.message),
): JsonlRow<T>[] {
  const rows: JsonlRow<T>[] = [];
  for (const e of jsonlEntries(text, check)) {
    if (e.problem !== null) throw fail({ line: e.line, message: e.problem });
    rows.push({ line: e.line, value: e.value as T });
  }
  return rows;
}

/** Every good row and every bad line's problem, both in file order. */
export function collectJsonl<T>(
  text: string,
  check: RowCheck = anyRow,
): { rows: JsonlRow<T>[]; problems: JsonlProblem[] } {
  const rows: JsonlRow<T>[] = [];
  const problems: JsonlProblem[] = [];
  for (const e of jsonlEntries(text, check)) {
    if (e.problem === null) rows.push({ line: e.line, value: e.value as T });
    else problems.push({ line: e.line, message: e.problem });
  }
  return { rows, problems };
}
