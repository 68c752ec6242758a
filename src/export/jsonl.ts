/** JSON Lines out (one JSON value per line, UTF-8, `\n` separated), and imported files' rows in. */
import { readJsonl, type JsonlRow, type RowCheck } from '../format/jsonl.ts';
import { ImportError } from './import-error.ts';

export function toJsonl(rows: Iterable<unknown>): string {
  let out = '';
  for (const row of rows) out += JSON.stringify(row) + '\n';
  return out;
}

/** Streams JSONL text chunk by chunk (for large exports written to a file or a Blob). */
export async function* jsonlChunks<T>(
  rows: Iterable<T> | AsyncIterable<T>,
  map: (row: T) => unknown = (r) => r,
  linesPerChunk = 500,
): AsyncGenerator<string> {
  let chunk = '';
  let n = 0;
  for await (const row of rows) {
    chunk += JSON.stringify(map(row)) + '\n';
    if (++n % linesPerChunk === 0) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}

/**
 * The rows of an imported JSONL file, each checked with `check` (a problem or null), read by the one
 * JSONL reader (format/jsonl.ts): blank lines skipped, row numbers are the file's line numbers. The
 * first bad line throws an ImportError naming the file and line, before anything is returned. Each row
 * keeps its line, for errors found later (an id seen twice).
 */
export function importJsonlRows<T>(text: string, file: string, check: RowCheck = () => null): JsonlRow<T>[] {
  return readJsonl<T>(text, check, (p) => new ImportError(file, p.message, { row: p.line }));
}

export function textOf(data: string | Uint8Array | ArrayBuffer): string {
  if (typeof data === 'string') return data;
  return new TextDecoder('utf-8', { fatal: false }).decode(data);
}
