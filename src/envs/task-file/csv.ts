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
  return { records: [...csvRecords(text, delimiter, problems)], problems };
}

/**
 * The same records one at a time, read as they are reached (a reader that stops at a row cap never
 * reads the rest); problems are pushed to `problems` as they are found.
 */
export function* csvRecords(text: string, delimiter: string, problems: string[]): Generator<CsvRecord> {
  const raw = splitRecords(text, delimiter, problems);
  let first = raw.next();
  while (!first.done && isBlank(first.value.cells)) first = raw.next();
  if (first.done) {
    if (!problems.length)
      problems.push('the file has no header row; the first line must name the columns, e.g. prompt,answer');
    return;
  }
  const header = first.value.cells.map((h) => h.trim());
  const seen = new Set<string>();
  header.forEach((name, i) => {
    if (name === '')
      problems.push(`line ${first.value!.line}: column ${i + 1} of the header has no name; name every column`);
    else if (seen.has(name.toLowerCase()))
      problems.push(
        `line ${first.value!.line}: the header names column "${name}" twice; give each column its own name`,
      );
    seen.add(name.toLowerCase());
  });
  let row = 0;
  for (const { cells, line } of raw) {
    if (isBlank(cells)) continue;
    row++;
    if (cells.length !== header.length) {
      problems.push(
        `row ${row} (line ${line}): has ${cells.length} fields but the header has ${header.length}; quote fields that contain "${delimiter === '\t' ? '\\t' : delimiter}" or a line break with "…"`,
      );
      continue;
    }
    yield { values: Object.fromEntries(header.map((h, i) => [h, cells[i]])), row, line };
  }
}

function isBlank(cells: string[]): boolean {
  return cells.length === 1 && cells[0].trim() === '';
}

/** Lines a text from `from` to `to` ends (LF, CR, or CRLF counted once). */
function lineBreaks(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) if (text[i] === '\n' || (text[i] === '\r' && text[i + 1] !== '\n')) n++;
  return n;
}

/**
 * The text split into records of cells, each with the line it starts on. Cells are sliced out of the
 * text, never built a character at a time (a 30 MB field must not become 30 million strings).
 */
function* splitRecords(
  text: string,
  delimiter: string,
  problems: string[],
): Generator<{ cells: string[]; line: number }> {
  let cells: string[] = [];
  let line = 1;
  let start = 1;
  let i = 0;
  const plainEnd = (from: number): number => {
    let j = from;
    while (j < text.length && text[j] !== delimiter && text[j] !== '\n' && text[j] !== '\r') j++;
    return j;
  };
  while (i <= text.length) {
    if (i === text.length) {
      if (cells.length) {
        cells.push('');
        yield { cells, line: start };
      }
      return;
    }
    let cell: string;
    if (text[i] === '"') {
      // A quoted field: up to the closing quote; "" is a quote.
      const opened = line;
      const parts: string[] = [];
      let from = i + 1;
      for (;;) {
        const quote = text.indexOf('"', from);
        if (quote < 0) {
          problems.push(
            `line ${opened}: a quoted field is never closed; close it with " (a quote inside a quoted field is written "")`,
          );
          return;
        }
        parts.push(text.slice(from, quote));
        line += lineBreaks(text, from, quote);
        if (text[quote + 1] === '"') {
          parts.push('"');
          from = quote + 2;
          continue;
        }
        i = quote + 1;
        break;
      }
      cell = parts.join('');
      // After the closing quote: a delimiter, a line end or the end of the text.
      if (i < text.length && text[i] !== delimiter && text[i] !== '\n' && text[i] !== '\r') {
        problems.push(
          `line ${line}: text after a closing quote; quote the whole field ("…"), writing a quote inside it as ""`,
        );
        const end = plainEnd(i);
        cell += text.slice(i, end);
        i = end;
      }
    } else {
      // Unquoted: a stray quote inside is kept as data.
      const end = plainEnd(i);
      cell = text.slice(i, end);
      i = end;
    }
    cells.push(cell);
    if (i >= text.length) {
      yield { cells, line: start };
      return;
    }
    if (text[i] === delimiter) {
      i++;
      continue;
    }
    // A line end: CRLF counts once.
    i += text[i] === '\r' && text[i + 1] === '\n' ? 2 : 1;
    yield { cells, line: start };
    cells = [];
    line++;
    start = line;
  }
}
