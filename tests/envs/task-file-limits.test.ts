/**
 * Task files that are too big, too long, broken deep inside, or checked by a verifier that can never
 * score: each is refused with a problem that names the row (or the cap), read a record at a time.
 * Inputs are generated; the caps are passed in small where the reader takes them.
 */
import { describe, expect, it } from 'vitest';
import { environmentSourceFromFile } from '../../src/envs/sources.ts';
import { MAX_TASK_FILE_BYTES, readTaskFile, TaskFileError } from '../../src/envs/task-file/index.ts';

const SMALL = { maxBytes: 4096, maxRows: 10 };

async function problemsOf(content: string | Uint8Array, fileName: string, limits = SMALL): Promise<string[]> {
  const error = await readTaskFile(content, fileName, limits).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TaskFileError);
  return (error as TaskFileError).problems;
}

const jsonlRows = (n: number) =>
  Array.from({ length: n }, (_, i) => JSON.stringify({ prompt: `What is ${i} + 1?`, answer: String(i + 1) })).join(
    '\n',
  );

describe('task file caps', () => {
  it('a file above the size cap is refused before it is decoded, naming the cap', async () => {
    const bytes = new TextEncoder().encode(jsonlRows(200));
    expect(bytes.byteLength).toBeGreaterThan(SMALL.maxBytes);
    expect(await problemsOf(bytes, 'big.jsonl')).toEqual([
      expect.stringMatching(/^the file is \d+ bytes, above the 4096 a task file may have/),
    ]);
    // The real cap, on a file one byte over it: no row is read.
    const over = new Uint8Array(MAX_TASK_FILE_BYTES + 1);
    await expect(readTaskFile(over, 'huge.jsonl')).rejects.toThrow(
      /huge\.jsonl: the file is 33554433 bytes, above the 33554432 a task file may have \(32 MiB\)/,
    );
  });

  it('the row after the row cap stops the reading, naming where, in every text format', async () => {
    expect(await problemsOf(jsonlRows(11), 'many.jsonl', { maxBytes: 1 << 20, maxRows: 10 })).toEqual([
      expect.stringMatching(/^line 11: the file has more than 10 rows/),
    ]);
    const csv = `prompt,answer\n${Array.from({ length: 11 }, (_, i) => `q${i},${i}`).join('\n')}\n`;
    expect(await problemsOf(csv, 'many.csv', { maxBytes: 1 << 20, maxRows: 10 })).toEqual([
      expect.stringMatching(/^row 11 \(line 12\): the file has more than 10 rows/),
    ]);
    const json = JSON.stringify(Array.from({ length: 11 }, (_, i) => ({ prompt: `q${i}`, answer: i })));
    expect(await problemsOf(json, 'many.json', { maxBytes: 1 << 20, maxRows: 10 })).toEqual([
      expect.stringMatching(/^item 11: the file has more than 10 rows/),
    ]);
    // At the cap exactly, every row is read.
    expect(await readTaskFile(jsonlRows(10), 'ten.jsonl', { maxBytes: 1 << 20, maxRows: 10 })).toHaveLength(10);
  });

  it('bad lines and a row nested too deeply to read are problems of their line', async () => {
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const text = [
      '{"prompt": "a", "answer": "1"}',
      '{"prompt": "b", "answer": ',
      `{"prompt": "c", "answer": "3", "meta": ${deep}}`,
      '{"prompt": "d"}',
    ].join('\n');
    expect(await problemsOf(text, 'rows.jsonl', { maxBytes: 1 << 20, maxRows: 10 })).toEqual([
      expect.stringMatching(/^line 2: not valid JSON/),
      expect.stringMatching(/^line 3: "meta" is nested too deeply \(more than 100 levels\)/),
      expect.stringMatching(/^line 4: "answer" is missing/),
    ]);
  });

  it('a CSV with an unclosed quote near its start is refused at that line, the rest never split into fields', async () => {
    const csv = `prompt,answer\n"never closed,1\n${'x,y\n'.repeat(2_000_000)}`;
    expect(await problemsOf(csv, 'open.csv', { maxBytes: 16 << 20, maxRows: 10 })).toEqual([
      expect.stringMatching(/^line 2: a quoted field is never closed/),
    ]);
  });

  it('a prompt past the prompt cap is a problem of its row', async () => {
    const text = JSON.stringify({ prompt: `Q ${'x'.repeat(40_000)}`, answer: '1' });
    expect(await problemsOf(text, 'long.jsonl', { maxBytes: 1 << 20, maxRows: 10 })).toEqual([
      expect.stringMatching(/^line 1: "prompt" is 40002 characters, above the 32000 a task's prompt may have/),
    ]);
  });
});

describe('a verifier that can never score is refused when the file is checked', () => {
  const rows = 'prompt,answer\n"What is 2+2?",4\n"What is 3+3?",6\n';
  for (const [what, source, reason] of [
    ['a syntax error', '(answer) => { return answer ===; }', /SyntaxError/],
    ['a promise that never settles', '(answer) => new Promise(() => {})', /never settled/],
    ['NaN for every answer', '() => NaN', /returned NaN; it must return a number in \[0, 1\] or a boolean/],
    ['a loop', '() => { for (;;) {} }', /timed out after 100 ms/],
  ] as const) {
    it(`${what}`, async () => {
      const error = await environmentSourceFromFile(rows, 'sums.csv', {
        verifier: { type: 'js', source, timeout_ms: 100 },
      }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(TaskFileError);
      expect((error as TaskFileError).problems).toEqual([
        expect.stringMatching(
          /^row 1 \(line 2\): the js verifier gives no score even for the row's own answer \(js verifier .*\), so it can score no answer/,
        ),
      ]);
      expect((error as TaskFileError).problems[0]).toMatch(reason);
    }, 30_000);
  }

  it("one that scores the row's own answer is kept", async () => {
    const source = await environmentSourceFromFile(rows, 'sums.csv', {
      verifier: { type: 'js', source: '(answer, row) => answer.trim() === String(row.answer)' },
    });
    expect(source).toMatchObject({ kind: 'tasks', name: 'sums' });
  }, 30_000);
});
