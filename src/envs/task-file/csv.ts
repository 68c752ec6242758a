/**
 * CSV (RFC 4180) and TSV: a header row, then one record per row. Fields may be quoted with `"`; inside
 * quotes a delimiter or a line break is data and `""` is one quote. Lines end in CRLF or LF. A record with
 * a different number of fields than the header is a problem naming its row and line; blank lines are
 * skipped. Lenient where nothing is lost: a stray `"` inside an unquoted field is kept as data.
 */

export interface CsvRecord {
  /** The record's cells by header name. */
  values: Record<string, string>;
  /** 1-based data row (the header is not counted) and the line the record starts on. */
  row: number;
  line: number;
}

/** Parses `text` into records keyed by the header; problems name the row, the line and the fix. */
export function parseCsv(text: string, delimiter = ','): { records: CsvRecord[]; problems: string[] } {
  const problems: string[] = [];
  const raw = splitRecords(text, delimiter, problems);
  const first = raw.findIndex((r) => !isBlank(r.cells));
  if (first < 0) return { records: [], problems: problems.length ? problems : ['the file has no header row; the first line must name the columns, e.g. prompt,answer'] };
  const header = raw[first].cells.map((h) => h.trim());
  const seen = new Set<string>();
  header.forEach((name, i) => {
    if (name === '') problems.push(`line ${raw[first].line}: column ${i + 1} of the header has no name; name every column`);
    else if (seen.has(name.toLowerCase())) problems.push(`line ${raw[first].line}: the header names column "${name}" twice; give each column its own name`);
    seen.add(name.toLowerCase());
  });
  const records: CsvRecord[] = [];
  let row = 0;
  for (const { cells, line } of raw.slice(first + 1)) {
    if (isBlank(cells)) continue;
    row++;
    if (cells.length !== header.length) {
      problems.push(`row ${row} (line ${line}): has ${cells.length} fields but the header has ${header.length}; quote fields that contain "${delimiter === '\t' ? '\\t' : delimiter}" or a line break with "…"`);
      continue;
    }
    records.push({ values: Object.fromEntries(header.map((h, i) => [h, cells[i]])), row, line });
  }
  return { records, problems };
}

function isBlank(cells: string[]): boolean {
  return cells.length === 1 && cells[0].trim() === '';
}

/** The text split into records of cells, each with the line it starts on. */
function splitRecords(text: string, delimiter: string, problems: string[]): { cells: string[]; line: number }[] {
  const out: { cells: string[]; line: number }[] = [];
  let cells: string[] = [];
  let cell = '';
  let line = 1;
  let start = 1;
  let i = 0;
  const endRecord = () => {
    cells.push(cell);
    out.push({ cells, line: start });
    cells = [];
    cell = '';
  };
  while (i < text.length) {
    const c = text[i];
    if (c === '"' && cell === '') {
      // A quoted field: up to the closing quote; "" is a quote.
      const opened = line;
      i++;
      for (;;) {
        if (i >= text.length) {
          problems.push(`line ${opened}: a quoted field is never closed; close it with " (a quote inside a quoted field is written "")`);
          endRecord();
          return out;
        }
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            cell += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        if (text[i] === '\n') line++;
        cell += text[i++];
      }
      // After the closing quote: a delimiter, a line end or the end of the text.
      if (i < text.length && text[i] !== delimiter && text[i] !== '\n' && text[i] !== '\r') {
        problems.push(`line ${line}: text after a closing quote; quote the whole field ("…"), writing a quote inside it as ""`);
        while (i < text.length && text[i] !== delimiter && text[i] !== '\n' && text[i] !== '\r') cell += text[i++];
      }
      continue;
    }
    if (c === delimiter) {
      cells.push(cell);
      cell = '';
      i++;
    } else if (c === '\r' || c === '\n') {
      i += c === '\r' && text[i + 1] === '\n' ? 2 : 1;
      endRecord();
      line++;
      start = line;
    } else {
      cell += c;
      i++;
    }
  }
  if (cell !== '' || cells.length) endRecord();
  return out;
}
