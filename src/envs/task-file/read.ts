/**
 * Reading a task file: JSONL (`.jsonl`, `.ndjson`), a JSON array (`.json`; a `.json` file of one object
 * per line is read as JSONL), CSV (`.csv`, RFC 4180 with a header row), TSV (`.tsv`) or Parquet
 * (`.parquet`), chosen by the file name's extension (a URL's query is ignored). Rows are checked by
 * rows.ts; every problem of the file is collected and thrown together as a `TaskFileError`.
 *
 * Parquet is read with hyparquet (already a dependency for the trajectory export): flat columns of any
 * type, lists (for `choices`, `tools`), snappy or uncompressed pages, and gzip through fflate. Not read:
 * zstd, brotli and lz4 pages (re-save with `compression="snappy"`). Reading is async because hyparquet's
 * reader is.
 */
import { gunzipSync } from 'fflate';
import { parquetReadObjects } from 'hyparquet';
import { parseCsv } from './csv.ts';
import { normalizeRow, TaskFileError, type TaskRow } from './rows.ts';
import { jsonlLines } from '../../jsonl.ts';

export type TaskFileFormat = 'jsonl' | 'json' | 'csv' | 'tsv' | 'parquet';

const EXTENSIONS: Record<string, TaskFileFormat> = { jsonl: 'jsonl', ndjson: 'jsonl', json: 'json', csv: 'csv', tsv: 'tsv', parquet: 'parquet', pq: 'parquet' };

/** The format a file name (or URL) names by its extension, or null. */
export function taskFileFormat(fileName: string): TaskFileFormat | null {
  const base = fileName.split(/[?#]/)[0].split(/[/\\]/).pop() ?? '';
  const ext = base.includes('.') ? base.slice(base.lastIndexOf('.') + 1).toLowerCase() : '';
  return EXTENSIONS[ext] ?? null;
}

/**
 * The rows of a task file. Throws `TaskFileError` listing every problem (capped), each naming the row
 * (its 1-based line or row number) and the field, and saying how to fix it.
 */
export async function readTaskFile(content: Uint8Array | string, fileName: string): Promise<TaskRow[]> {
  const format = taskFileFormat(fileName);
  if (!format) {
    throw new TaskFileError([`cannot tell the format from the name; use one of the extensions ${Object.keys(EXTENSIONS).map((e) => `.${e}`).join(', ')}`], fileName);
  }
  const problems: string[] = [];
  let rows: TaskRow[];
  if (format === 'parquet') {
    if (typeof content === 'string') throw new TaskFileError(['a Parquet file is binary; pass its bytes (a Uint8Array), not text'], fileName);
    rows = await readParquet(content, fileName, problems);
  } else {
    rows = readText(decode(content, fileName), format, problems);
  }
  if (!problems.length && !rows.length) problems.push('the file has no rows; each row needs at least "prompt" and "answer"');
  if (problems.length) throw new TaskFileError(problems, fileName);
  return rows;
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

function readText(text: string, format: Exclude<TaskFileFormat, 'parquet'>, problems: string[]): TaskRow[] {
  if (format === 'csv' || format === 'tsv') {
    const { records, problems: csvProblems } = parseCsv(text, format === 'tsv' ? '\t' : ',');
    problems.push(...csvProblems);
    return keep(records.map((r) => normalizeRow(r.values, r.row === r.line ? `row ${r.row}` : `row ${r.row} (line ${r.line})`, problems)));
  }
  if (format === 'json') {
    const trimmed = text.trimStart();
    if (!trimmed.startsWith('[') && !trimmed.startsWith('{')) {
      problems.push('line 1: a .json task file must be an array of rows, [{"prompt": …, "answer": …}, …], or one JSON object per line');
      return [];
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (e) {
      // One object per line in a .json file: read it as JSONL.
      if (trimmed.startsWith('{')) return readText(text, 'jsonl', problems);
      problems.push(`not valid JSON (${errorText(e)}); a .json task file must be an array of rows, [{"prompt": …, "answer": …}, …]`);
      return [];
    }
    const list = Array.isArray(data) ? data : rowList(data);
    if (!list) {
      problems.push('a .json task file must be an array of rows (or an object whose "rows" or "data" is that array)');
      return [];
    }
    return keep(list.map((raw, i) => normalizeRow(raw, `item ${i + 1}`, problems)));
  }
  const rows: (TaskRow | null)[] = [];
  for (const { line, value, error } of jsonlLines(text)) {
    if (error) problems.push(`line ${line}: ${error}; each line must be one JSON object like {"prompt": "…", "answer": "…"}`);
    else rows.push(normalizeRow(value, `line ${line}`, problems));
  }
  return keep(rows);
}

function rowList(data: unknown): unknown[] | null {
  if (typeof data !== 'object' || data === null) return null;
  const d = data as Record<string, unknown>;
  return Array.isArray(d.rows) ? d.rows : Array.isArray(d.data) ? d.data : null;
}

async function readParquet(bytes: Uint8Array, fileName: string, problems: string[]): Promise<TaskRow[]> {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  let objects: Record<string, unknown>[];
  try {
    objects = await parquetReadObjects({ file, compressors: { GZIP: (input: Uint8Array) => gunzipSync(input) } });
  } catch (e) {
    const text = errorText(e);
    const hint = /compression|codec|unsupported/i.test(text)
      ? '; this reader takes uncompressed, snappy or gzip pages: re-save it with compression="snappy"'
      : /magic|parquet/i.test(text) ? '; is it a Parquet file?' : '';
    throw new TaskFileError([`cannot read it as Parquet (${text})${hint}`], fileName);
  }
  return keep(objects.map((raw, i) => normalizeRow(raw, `row ${i + 1}`, problems)));
}

function keep(rows: (TaskRow | null)[]): TaskRow[] {
  return rows.filter((r): r is TaskRow => r !== null);
}

function errorText(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0];
}
