/** JSON Lines: one JSON value per line, UTF-8, `\n` separated, with line-numbered parse errors. */
import { jsonlLines } from '../jsonl.ts';
import { ImportError } from './import-error.ts';

export function toJsonl(rows: Iterable<unknown>): string {
  let out = '';
  for (const row of rows) out += JSON.stringify(row) + '\n';
  return out;
}

/** Streams JSONL text chunk by chunk (for large exports written to a file or a Blob). */
export async function* jsonlChunks<T>(rows: Iterable<T> | AsyncIterable<T>, map: (row: T) => unknown = (r) => r, linesPerChunk = 500): AsyncGenerator<string> {
  let chunk = '';
  let n = 0;
  for await (const row of rows) {
    chunk += JSON.stringify(map(row)) + '\n';
    if (++n % linesPerChunk === 0) { yield chunk; chunk = ''; }
  }
  if (chunk) yield chunk;
}

/**
 * Parses JSONL and checks each row with `check` (returns a problem or null). Blank lines are
 * skipped; row numbers are line numbers. Throws on the first bad line, before returning anything.
 */
export function parseJsonl<T>(text: string, file: string, check: (row: unknown) => string | null = () => null): T[] {
  const rows: T[] = [];
  const lines = jsonlLines(text);
  for (const { line, value, error } of lines) {
    if (error) {
      const hint = line === lines.at(-1)?.line && !text.endsWith('\n') ? ' (the file may be truncated)' : '';
      throw new ImportError(file, `${error}${hint}`, { row: line });
    }
    const problem = check(value);
    if (problem) throw new ImportError(file, problem, { row: line });
    rows.push(value as T);
  }
  return rows;
}

export function textOf(data: string | Uint8Array | ArrayBuffer): string {
  if (typeof data === 'string') return data;
  return new TextDecoder('utf-8', { fatal: false }).decode(data);
}
