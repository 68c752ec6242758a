/**
 * Reading a task file: JSONL (`.jsonl`, `.ndjson`), a JSON array (`.json`; a `.json` file of one object
 * per line is read as JSONL), CSV (`.csv`, RFC 4180 with a header row), TSV (`.tsv`) or Parquet
 * (`.parquet`), chosen by the file name's extension (a URL's query is ignored). Rows are checked by
 * rows.ts; every problem of the file is collected and thrown together as a `TaskFileError`.
 *
 * Bounded: a file above MAX_TASK_FILE_BYTES is refused before it is decoded, and one of more than
 * MAX_TASK_ROWS rows as soon as the row after the last is reached (a Parquet file by its metadata,
 * before its rows are read). JSONL, CSV and TSV are read a record at a time, each checked as it is
 * reached, so reading holds the text and the rows, not copies of every line; a record that cannot be
 * read at all (nested too deeply) is a problem naming its line, like any other.
 *
 * Parquet is read with hyparquet (already a dependency for the trajectory export): flat columns of any
 * type, lists (for `choices`, `tools`), snappy or uncompressed pages, and gzip through fflate. Not read:
 * zstd, brotli and lz4 pages (re-save with `compression="snappy"`). Reading is async because hyparquet's
 * reader is.
 */
import { gunzipSync } from 'fflate';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { csvRecords } from './csv.ts';
import { normalizeRow, TaskFileError, type TaskRow } from './rows.ts';
import { jsonlEntries } from '../../format/jsonl.ts';

/** The largest task file read, in bytes (32 MiB: some 100,000 questions of a few hundred characters). */
export const MAX_TASK_FILE_BYTES = 32 * 1024 * 1024;
/** The most rows a task file may have. */
export const MAX_TASK_ROWS = 50_000;

export interface TaskFileLimits {
  maxBytes: number;
  maxRows: number;
}
const LIMITS: TaskFileLimits = { maxBytes: MAX_TASK_FILE_BYTES, maxRows: MAX_TASK_ROWS };

export type TaskFileFormat = 'jsonl' | 'json' | 'csv' | 'tsv' | 'parquet';

const EXTENSIONS: Record<string, TaskFileFormat> = {
  jsonl: 'jsonl',
  ndjson: 'jsonl',
  json: 'json',
  csv: 'csv',
  tsv: 'tsv',
  parquet: 'parquet',
  pq: 'parquet',
};

/** The format a file name (or URL) names by its extension, or null. */
export function taskFileFormat(fileName: string): TaskFileFormat | null {
  const base = fileName.split(/[?#]/)[0].split(/[/\\]/).pop() ?? '';
  const ext = base.includes('.') ? base.slice(base.lastIndexOf('.') + 1).toLowerCase() : '';
  return EXTENSIONS[ext] ?? null;
}

/**
 * The rows of a task file. Throws `TaskFileError` listing every problem (capped), each naming the row
 * (its 1-based line or row number) and the field, and saying how to fix it. `limits` are for tests.
 */
export async function readTaskFile(
  content: Uint8Array | string,
  fileName: string,
  limits: TaskFileLimits = LIMITS,
): Promise<TaskRow[]> {
  const format = taskFileFormat(fileName);
  if (!format) {
    throw new TaskFileError(
      [
        `cannot tell the format from the name; use one of the extensions ${Object.keys(EXTENSIONS)
          .map((e) => `.${e}`)
          .join(', ')}`,
      ],
      fileName,
    );
  }
  const size = typeof content === 'string' ? content.length : content.byteLength;
  if (size > limits.maxBytes) {
    const unit = typeof content === 'string' ? 'characters' : 'bytes';
    const problem = `the file is ${size} ${unit}, above the ${limits.maxBytes} a task file may have (${formatMiB(limits.maxBytes)})`;
    throw new TaskFileError([`${problem}; split it, or keep the rows you train on`], fileName);
  }
  const problems: string[] = [];
  const rows = new RowReader(limits.maxRows, problems);
  if (format === 'parquet') {
    if (typeof content === 'string')
      throw new TaskFileError(['a Parquet file is binary; pass its bytes (a Uint8Array), not text'], fileName);
    await readParquet(content, fileName, rows);
  } else {
    readText(decode(content, fileName), format, rows);
  }
  if (!problems.length && !rows.rows.length)
    problems.push('the file has no rows; each row needs at least "prompt" and "answer"');
  if (problems.length) throw new TaskFileError(problems, fileName);
  return rows.rows;
}

/** Rows as they are read: each checked at once, the cap enforced as the row after the last arrives. */
class RowReader {
  readonly rows: TaskRow[] = [];
  private count = 0;

  constructor(
    readonly cap: number,
    readonly problems: string[],
  ) {}

  /** Checks one record and keeps it when it is a row; false once the file has more rows than the cap (the reader then stops). */
  add(raw: unknown, where: string): boolean {
    if (!this.next(where)) return false;
    try {
      const row = normalizeRow(raw, where, this.problems);
      if (row) this.rows.push(row);
    } catch (e) {
      // A record no check can walk (thousands of levels of nesting overflow the stack).
      this.problems.push(`${where}: cannot be read (${errorText(e)}); a row is flat fields, or lists of plain values`);
    }
    return true;
  }

  /** Counts one record; false, saying so, once there are more than the cap. */
  next(where: string): boolean {
    if (++this.count <= this.cap) return true;
    this.tooMany(where);
    return false;
  }

  tooMany(where: string): void {
    this.problems.push(
      `${where}: the file has more than ${this.cap} rows, the most a task file may have; split it, or keep the rows you train on`,
    );
  }
}

function decode(content: Uint8Array | string, fileName: string): string {
  let text: string;
  if (typeof content === 'string') text = content;
  else {
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(content);
    } catch {
      throw new TaskFileError(['the file is not UTF-8 text; save it as UTF-8'], fileName);
    }
  }
  return text.replace(/^\uFEFF/, '');
}

function readText(text: string, format: Exclude<TaskFileFormat, 'parquet'>, rows: RowReader): void {
  const { problems } = rows;
  if (format === 'csv' || format === 'tsv') {
    for (const r of csvRecords(text, format === 'tsv' ? '\t' : ',', problems)) {
      if (!rows.add(r.values, r.row === r.line ? `row ${r.row}` : `row ${r.row} (line ${r.line})`)) return;
    }
    return;
  }
  if (format === 'json') {
    const trimmed = text.trimStart();
    if (!trimmed.startsWith('[') && !trimmed.startsWith('{')) {
      problems.push(
        'line 1: a .json task file must be an array of rows, [{"prompt": …, "answer": …}, …], or one JSON object per line',
      );
      return;
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (e) {
      // One object per line in a .json file: read it as JSONL.
      if (trimmed.startsWith('{')) return readText(text, 'jsonl', rows);
      problems.push(
        `not valid JSON (${errorText(e)}); a .json task file must be an array of rows, [{"prompt": …, "answer": …}, …]`,
      );
      return;
    }
    const list = Array.isArray(data) ? data : rowList(data);
    if (!list) {
      problems.push('a .json task file must be an array of rows (or an object whose "rows" or "data" is that array)');
      return;
    }
    for (const [i, raw] of list.entries()) if (!rows.add(raw, `item ${i + 1}`)) return;
    return;
  }
  for (const { line, value, problem } of jsonlEntries(text)) {
    if (problem === null) {
      if (!rows.add(value, `line ${line}`)) return;
    } else if (rows.next(`line ${line}`))
      problems.push(`line ${line}: ${problem}; each line must be one JSON object like {"prompt": "…", "answer": "…"}`);
    else return;
  }
}

function rowList(data: unknown): unknown[] | null {
  if (typeof data !== 'object' || data === null) return null;
  const d = data as Record<string, unknown>;
  return Array.isArray(d.rows) ? d.rows : Array.isArray(d.data) ? d.data : null;
}

async function readParquet(bytes: Uint8Array, fileName: string, rows: RowReader): Promise<void> {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  let objects: Record<string, unknown>[];
  try {
    // The row count first, from the metadata: a file of too many rows is refused before they are read.
    const count = Number(parquetMetadata(file).num_rows);
    if (count > rows.cap) return rows.tooMany(`row ${rows.cap + 1}`);
    objects = await parquetReadObjects({ file, compressors: { GZIP: (input: Uint8Array) => gunzipSync(input) } });
  } catch (e) {
    const text = errorText(e);
    const hint = /compression|codec|unsupported/i.test(text)
      ? '; this reader takes uncompressed, snappy or gzip pages: re-save it with compression="snappy"'
      : /magic|parquet/i.test(text)
        ? '; is it a Parquet file?'
        : '';
    throw new TaskFileError([`cannot read it as Parquet (${text})${hint}`], fileName);
  }
  for (const [i, raw] of objects.entries()) if (!rows.add(raw, `row ${i + 1}`)) return;
}

function formatMiB(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${+(bytes / (1024 * 1024)).toFixed(1)} MiB` : `${bytes} bytes`;
}

function errorText(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0];
}
