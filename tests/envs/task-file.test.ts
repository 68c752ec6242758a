/**
 * Task files: each format parses, problems name the row and the field, each verifier scores (the js one
 * through real QuickJS, with its deadline), splits are deterministic and disjoint, an explicit split is
 * honoured, and the example word problems load with an expert that scores 1 and blind answers that do not.
 */
import { readFileSync } from 'node:fs';
import { gzipSync } from 'fflate';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { describe, expect, it } from 'vitest';
import type { Split, Task } from '../../src/contracts.ts';
import { defineEnvironment } from '../../src/envs/define.ts';
import {
  readTaskFile,
  taskFileSpec,
  TaskFileError,
  type TaskRow,
  type VerifierConfig,
} from '../../src/envs/task-file/index.ts';
import { extractChoice, extractFinalNumber, verify } from '../../src/envs/task-file/verifiers.ts';
import { expertTrajectory } from '../../src/rollout/expert.ts';
import { fakeTrajectory } from '../rollout/helpers.ts';

const enc = (s: string) => new TextEncoder().encode(s);
const answered = (text: string) => fakeTrajectory({ final_response: text });

async function problemsOf(content: string | Uint8Array, name: string): Promise<string[]> {
  try {
    await readTaskFile(content, name);
  } catch (e) {
    if (e instanceof TaskFileError) return e.problems;
    throw e;
  }
  throw new Error('expected a TaskFileError');
}

function specProblems(build: () => unknown): string[] {
  try {
    build();
  } catch (e) {
    if (e instanceof TaskFileError) return e.problems;
    throw e;
  }
  throw new Error('expected a TaskFileError');
}

describe('reading task files', () => {
  it('JSONL: aliases, numbers for answers, blank lines; other fields kept', async () => {
    const text =
      '{"question": "2+3?", "answer": 5, "id": "a1"}\n\n{"prompt": "Capital of France?", "answer": "Paris", "level": 2, "split": "test", "tools": ["calc"]}\r\n';
    const rows = await readTaskFile(enc(text), 'qa.jsonl');
    expect(rows).toEqual([
      { prompt: '2+3?', answer: '5', extra: { id: 'a1' }, source: 'line 1' },
      { prompt: 'Capital of France?', answer: 'Paris', level: 2, split: 'test', tools: ['calc'], source: 'line 3' },
    ]);
  });

  it('JSON: an array, an object with "rows", or one object per line', async () => {
    const rows = [{ problem: 'x?', solution: '1 #### 7', level: 'Level 3' }];
    expect(await readTaskFile(JSON.stringify(rows), 'a.json')).toEqual([
      { prompt: 'x?', answer: '1 #### 7', level: 3, source: 'item 1' },
    ]);
    expect(await readTaskFile(JSON.stringify({ rows }), 'b.json')).toHaveLength(1);
    expect(
      await readTaskFile('{"prompt": "a", "answer": "b"}\n{"prompt": "c", "answer": "d"}\n', 'c.json'),
    ).toHaveLength(2);
  });

  it('CSV: RFC 4180 quoting (delimiters, quotes and line breaks inside quotes), CRLF, a header in any case', async () => {
    const csv =
      'Question,Answer,level,tools,choices\r\n"How many, in all?","12",1,calc js,\r\n"He said ""hi""\nthen left. Who?",Bob,2,,"[""Ann"", ""Bob""]"\r\n';
    const rows = await readTaskFile(csv, 'data.csv');
    expect(rows).toEqual([
      { prompt: 'How many, in all?', answer: '12', level: 1, tools: ['calc', 'js'], source: 'row 1 (line 2)' },
      {
        prompt: 'He said "hi"\nthen left. Who?',
        answer: 'Bob',
        level: 2,
        choices: ['Ann', 'Bob'],
        source: 'row 2 (line 3)',
      },
    ]);
    expect(await readTaskFile('prompt\tanswer\n1+1?\t2\n', 'data.tsv')).toEqual([
      { prompt: '1+1?', answer: '2', source: 'row 1 (line 2)' },
    ]);
  });

  it('Parquet: flat columns, lists, INT64, snappy and gzip pages', async () => {
    for (const codec of ['SNAPPY', 'GZIP'] as const) {
      const buffer = parquetWriteBuffer({
        columnData: [
          { name: 'question', data: ['2+3?', 'Pick the even one'], type: 'STRING' },
          { name: 'answer', data: ['5', 'B'], type: 'STRING' },
          { name: 'level', data: [1, 2], type: 'INT32' },
          { name: 'id', data: [10n, 11n], type: 'INT64' },
          { name: 'choices', data: [null, ['3', '4', '5']] },
        ],
        codec,
        compressors: { GZIP: (b: Uint8Array) => gzipSync(b) },
      });
      const rows = await readTaskFile(new Uint8Array(buffer), 'https://example.org/data/train.parquet?download=1');
      expect(rows).toEqual([
        { prompt: '2+3?', answer: '5', level: 1, extra: { id: 10 }, source: 'row 1' },
        {
          prompt: 'Pick the even one',
          answer: 'B',
          level: 2,
          choices: ['3', '4', '5'],
          extra: { id: 11 },
          source: 'row 2',
        },
      ]);
    }
    expect(await problemsOf(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]), 'x.parquet')).toEqual([
      expect.stringMatching(/cannot read it as Parquet .*is it a Parquet file/),
    ]);
    expect(await problemsOf('text', 'x.parquet')).toEqual([expect.stringMatching(/binary; pass its bytes/)]);
  });

  it('collects every problem, each naming the row (line) and the field and saying how to fix it', async () => {
    const text = [
      '{"prompt": "ok", "answer": "1"}',
      '{"prompt": "broken", ',
      '{"prompt": "no answer"}',
      '{"prompt": "p", "answer": "a", "level": 9}',
      '{"prompt": "p", "answer": "a", "tools": ["calc", "python"]}',
      '{"prompt": "p", "answer": "a", "split": "holdout", "verifier": {"type": "number", "abs_tol": -1}}',
      '["not", "an", "object"]',
      '{"answer": "a"}',
    ].join('\n');
    const problems = await problemsOf(text, 'bad.jsonl');
    expect(problems).toEqual([
      expect.stringMatching(/^line 2: not valid JSON .*each line must be one JSON object/),
      expect.stringMatching(/^line 3: "answer" is missing; add the expected answer as "answer" \(or "target"/),
      expect.stringMatching(/^line 4: "level" must be a whole number 1–5 .*got 9/),
      expect.stringMatching(/^line 5: "tools" names unknown tools "python"; the built-in tools are js, calc, sh, git/),
      expect.stringMatching(/^line 6: "split" must be train, validation or test/),
      expect.stringMatching(/^line 6: "verifier.abs_tol" must be a number ≥ 0 .*got -1/),
      expect.stringMatching(/^line 7: a row must be an object/),
      expect.stringMatching(/^line 8: "prompt" is missing; add the question as "prompt" \(or "question"/),
    ]);
    const csvProblems = await problemsOf('prompt,answer\na,b\n"x,y",z,extra\n"never closed,1\n', 'bad.csv');
    // In the order of the file; an unclosed quote ends the reading (what follows it is all inside the field).
    expect(csvProblems).toEqual([
      expect.stringMatching(/^row 2 \(line 3\): has 3 fields but the header has 2; quote fields/),
      expect.stringMatching(/^line 4: a quoted field is never closed/),
    ]);
    expect(await problemsOf('prompt,answer\n', 'empty.csv')).toEqual([expect.stringMatching(/no rows/)]);
    expect(await problemsOf('x', 'tasks.xlsx')).toEqual([
      expect.stringMatching(/cannot tell the format.*\.jsonl.*\.csv.*\.parquet/),
    ]);
  });

  it('caps the list of problems it reports, counting the rest', async () => {
    const text = Array.from({ length: 50 }, (_, i) => `{"prompt": "q${i}"}`).join('\n');
    const error = await readTaskFile(text, 'many.jsonl').catch((e: unknown) => e as TaskFileError);
    expect(error).toBeInstanceOf(TaskFileError);
    expect((error as TaskFileError).problems).toHaveLength(50);
    expect((error as TaskFileError).message).toMatch(/50 problems:[\s\S]*line 20: [\s\S]*… and 30 more problems$/);
    expect((error as TaskFileError).message).not.toMatch(/line 21:/);
  });
});

describe('verifiers', () => {
  const v = (
    verifier: VerifierConfig,
    response: string,
    answer: string | number,
    extra: Record<string, unknown> = {},
  ) => verify(verifier, response, { answer, ...extra });

  it('exact: trimmed and cleaned ("Answer: Paris."), case-sensitive unless ignore_case', async () => {
    expect((await v({ type: 'exact' }, '  Answer: Paris. ', 'Paris')).score).toBe(1);
    expect((await v({ type: 'exact' }, 'paris', 'Paris')).score).toBe(0);
    expect((await v({ type: 'exact', ignore_case: true }, 'paris', 'Paris')).score).toBe(1);
    expect(await v({ type: 'exact' }, 'Lyon', 'Paris')).toEqual({ score: 0, reason: 'expected "Paris", got "Lyon"' });
  });

  it('number: the final number however it is written, within the tolerance', async () => {
    const reads: [string, number | null][] = [
      ['#### 42', 42],
      ['Step 1: 6*7 = 42\n#### 42', 42],
      ['The answer is 1,234.', 1234],
      ['It costs $42', 42],
      ['so $1,000,000.00 in all', 1e6],
      ['The answer is 42 (6 × 7).', 42],
      ['\\boxed{17}', 17],
      ['-5', -5],
      ['−5 degrees', -5],
      ['3/4 of it', 0.75],
      ['**Answer:** 12 apples', 12],
      ['x = 2.50', 2.5],
      ['no digits here', null],
      ['v2 of the plan', null],
    ];
    for (const [text, want] of reads) expect([text, extractFinalNumber(text)]).toEqual([text, want]);
    expect(
      (await v({ type: 'number' }, 'I think it is 18.', 'Janet sells 16 - 3 - 4 = 9 eggs; 9 * 2 = 18\n#### 18')).score,
    ).toBe(1);
    expect((await v({ type: 'number' }, '17', 18)).score).toBe(0);
    expect((await v({ type: 'number' }, 'nothing', 18)).reason).toBe('the answer holds no number');
    expect((await v({ type: 'number', abs_tol: 0.01 }, '3.14', '3.14159')).score).toBe(1);
    expect((await v({ type: 'number', rel_tol: 0.01 }, '1005', '1000')).score).toBe(1);
    expect((await v({ type: 'number' }, '1005', '1000')).score).toBe(0);
  });

  it('contains and regex (RE2: linear time, the row answer is the pattern unless the verifier gives one)', async () => {
    expect((await v({ type: 'contains' }, 'It is the Eiffel   Tower.', 'Eiffel Tower')).score).toBe(1);
    expect((await v({ type: 'contains', ignore_case: true }, 'eiffel tower', 'Eiffel Tower')).score).toBe(1);
    expect((await v({ type: 'contains' }, 'eiffel tower', 'Eiffel Tower')).score).toBe(0);
    expect((await v({ type: 'regex' }, 'the color is grey', 'gr[ae]y')).score).toBe(1);
    expect((await v({ type: 'regex' }, 'green', '^gr[ae]y$')).score).toBe(0);
    expect((await v({ type: 'regex', pattern: '^\\d{3}-\\d{4}$' }, '555-1234', '555-0000')).score).toBe(1);
    const slow = await v({ type: 'regex' }, `${'a'.repeat(5000)}!`, '(a+)+$');
    expect(slow.score).toBe(0);
    expect((await v({ type: 'regex' }, 'x', '(a)\\1')).score).toBeNull();
  });

  it('choice: a letter from "(B)", "Answer: b", "B) text" or the choice text; never an article', async () => {
    for (const text of [
      'B',
      '(b)',
      'Answer: b',
      'The answer is (B).',
      'B) 14 apples',
      '**B**',
      'I pick (B) because 2 × 7 = 14',
      '14',
    ]) {
      expect([text, extractChoice(text, ['12', '14', '16'])]).toEqual([text, 'B']);
    }
    for (const text of ['The answer is a cat', 'A or B', 'none of them', ''])
      expect([text, extractChoice(text)]).toEqual([text, null]);
    expect((await v({ type: 'choice' }, 'Answer: (c)', 'C')).score).toBe(1);
    expect((await v({ type: 'choice' }, 'A', 'C')).score).toBe(0);
    expect((await v({ type: 'choice' }, 'A', '16', { choices: ['12', '14', '16'] })).reason).toBe('expected C, got A');
  });

  it('js: runs in QuickJS with the answer, the row and the trajectory as JSON; a bad result is null with a reason', async () => {
    const js = (source: string, timeout_ms = 1000): VerifierConfig => ({ type: 'js', source, timeout_ms });
    const row = { answer: '42', prompt: 'q', unit: 'kg' };
    const trajectory = fakeTrajectory({ final_response: '42 kg' });
    expect(
      await verify(
        js('(answer, row, t) => answer === row.answer + " " + row.unit && t.final_response === answer ? 1 : 0'),
        '42 kg',
        row,
        trajectory,
      ),
    ).toEqual({ score: 1, reason: 'js verifier returned 1' });
    expect((await verify(js('async (answer) => answer.length > 100'), 'short', row)).score).toBe(0);
    expect((await verify(js('(answer) => 0.25'), 'x', row)).score).toBe(0.25);
    // A model's answer is data, never code: a quote or a script in it reaches the function as a string.
    expect(
      (await verify(js('(answer) => answer === "\\"); throw 1; (\\"" ? 1 : 0'), '"); throw 1; ("', row)).score,
    ).toBe(1);

    const seven = await verify(js('() => 7'), 'x', row);
    expect(seven).toEqual({
      score: null,
      reason: 'js verifier returned 7; it must return a number in [0, 1] or a boolean',
    });
    for (const source of [
      '() => null',
      '() => "1"',
      '() => undefined',
      '() => NaN',
      '42',
      '() => { throw new Error("boom") }',
      '(a) => a.nope.deeper',
    ]) {
      const verdict = await verify(js(source), 'x', row);
      expect([source, verdict.score]).toEqual([source, null]);
      expect(verdict.reason).toMatch(/^js verifier /);
    }
    expect((await verify(js('() => { throw new Error("boom") }'), 'x', row)).reason).toBe(
      'js verifier failed: Error: boom',
    );
    // No host access from the verifier.
    expect(
      (
        await verify(
          js('() => typeof process === "undefined" && typeof fetch === "undefined" && typeof require === "undefined"'),
          'x',
          row,
        )
      ).score,
    ).toBe(1);

    const loop = await verify(js('() => { for (;;) {} }', 150), 'x', row);
    expect(loop).toEqual({ score: null, reason: 'js verifier timed out after 150 ms' });
  });
});

describe('a task file as an environment', () => {
  const rows = (n: number, extra: (i: number) => Partial<TaskRow> = () => ({})): TaskRow[] =>
    Array.from({ length: n }, (_, i) => ({
      prompt: `What is ${i} plus ${i + 7}?`,
      answer: 2 * i + 7,
      level: 1 + (i % 3),
      ...extra(i),
    }));

  it('offers the levels present, draws deterministically, and keeps train, validation and test disjoint', () => {
    const env = defineEnvironment(taskFileSpec('sums', rows(120), { verifier: { type: 'number' } }));
    expect(env.difficulties).toEqual([1, 2, 3]);
    expect(env.requiredTools).toEqual([]);
    expect(env.instructions).toBe('End with the final answer as a number.');
    expect(env.generate(5, 2, 'train')).toEqual(env.generate(5, 2, 'train'));
    const keys: Record<Split, Set<string>> = { train: new Set(), validation: new Set(), test: new Set() };
    for (const split of ['train', 'validation', 'test'] as const) {
      for (let seed = 0; seed < 60; seed++) {
        const task = env.generate(seed, 1 + (seed % 3), split);
        expect(task.difficulty).toBe(1 + (seed % 3));
        keys[split].add(String(task.data.item_key));
      }
    }
    expect(keys.train.size).toBeGreaterThan(10);
    expect(keys.test.size).toBeGreaterThan(3);
    for (const [a, b] of [
      ['train', 'test'],
      ['train', 'validation'],
      ['validation', 'test'],
    ] as const) {
      expect([...keys[a]].filter((k) => keys[b].has(k))).toEqual([]);
    }
    // The same question reworded only by spacing and case is the same item.
    const twins = taskFileSpec('twins', [
      { prompt: 'What is 2+2?', answer: 4 },
      { prompt: '  what IS  2+2? ', answer: 4 },
    ]);
    const [a, b] = [0, 1].map((i) => twins.sample({ pick: <T>(xs: readonly T[]) => xs[i] } as never, 1).key);
    expect(a).toBe(b);
  });

  it('honours an explicit split: pinned rows are drawn only for their split, with their twins', () => {
    const pinned = rows(60, (i) => ({ split: i < 12 ? 'test' : 'train' }));
    pinned.push({ prompt: 'What is 0 plus 7?', answer: 7, level: 1 }); // twin of a test row, no split of its own
    const env = defineEnvironment(taskFileSpec('pinned', pinned, { verifier: { type: 'number' } }));
    const testRows = new Set(pinned.slice(0, 12).map((r) => r.prompt));
    for (let seed = 0; seed < 40; seed++) {
      expect(testRows.has(env.generate(seed, 1 + (seed % 3), 'test').prompt)).toBe(true);
      expect(testRows.has(env.generate(seed, 1 + (seed % 3), 'train').prompt)).toBe(false);
    }
    expect(() => env.generate(0, 1, 'validation')).toThrow(/no validation item/);
    const clash = specProblems(() =>
      taskFileSpec('clash', [
        { prompt: 'Q', answer: 1, split: 'train', source: 'line 1' },
        { prompt: 'q', answer: 1, split: 'test', source: 'line 2' },
      ]),
    );
    expect(clash).toEqual([
      'line 2: "split" is test but line 1 asks the same question in train; a question belongs to one split',
    ]);
  });

  it('define.ts: TaskItem.split pins an item for any spec', () => {
    const env = defineEnvironment({
      name: 'pinned_items',
      description: 'Items with a split of their own.',
      tags: ['test'],
      requiredTools: [],
      sample: (rng) => {
        const n = rng.int(0, 999);
        return { prompt: `n=${n}`, data: { n }, split: n % 2 ? 'test' : 'train' };
      },
      evaluate: () => 1,
    });
    for (let seed = 0; seed < 20; seed++) {
      expect((env.generate(seed, 1, 'test').data.n as number) % 2).toBe(1);
      expect((env.generate(seed, 1, 'train').data.n as number) % 2).toBe(0);
    }
  });

  it('tools per row: the union is required; an unknown tool is a problem naming the row', () => {
    const spec = taskFileSpec(
      'tooled',
      rows(4, (i) => ({ tools: i === 0 ? ['calc'] : i === 1 ? ['js', 'calc'] : undefined })),
    );
    expect(spec.requiredTools).toEqual(['js', 'calc']);
    // The row's own tools travel with its task (level 2 holds row 1, whose tools are js and calc).
    const item = spec.sample({ pick: <T>(xs: readonly T[]) => xs[0] } as never, 2);
    expect((item.data.row as TaskRow).tools).toEqual(['js', 'calc']);
    expect(specProblems(() => taskFileSpec('bad', [{ prompt: 'q', answer: 1, tools: ['python' as never] }]))).toEqual([
      'row 1: "tools" names unknown tools "python"; the built-in tools are js, calc, sh, git',
    ]);
  });

  it('checks answers against the verifier when it is built, naming the row and the field', () => {
    const problems = specProblems(() =>
      taskFileSpec(
        'checked',
        [
          { prompt: 'a', answer: 'forty-two', verifier: { type: 'number' }, source: 'line 1' },
          { prompt: 'b', answer: 'Z', verifier: { type: 'choice' }, source: 'line 2' },
          { prompt: 'c', answer: 'E', choices: ['1', '2', '3'], verifier: { type: 'choice' }, source: 'line 3' },
          { prompt: 'd', answer: 'x', verifier: { type: 'regex', pattern: '^\\d+$' }, source: 'line 4' },
          { prompt: 'e', answer: '(a)\\1', verifier: { type: 'regex' }, source: 'line 5' },
        ],
        { verifier: { type: 'nope' } as never },
      ),
    );
    expect(problems).toEqual([
      expect.stringMatching(/^"tasks.verifier.type" is "nope"; allowed: exact, number/),
      expect.stringMatching(/^line 1: "answer" "forty-two" holds no number for the number verifier; write the number/),
      expect.stringMatching(/^line 2: "answer" "Z" is not a choice; the choice verifier needs a letter A–E/),
      expect.stringMatching(/^line 3: "answer" is E but there are only 3 choices \(A–C\)/),
      expect.stringMatching(/^line 4: "answer" "x" does not match the verifier's pattern/),
      expect.stringMatching(/^line 5: "answer" is not a valid RE2 regular expression/),
    ]);
  });

  it('choice rows: options under the prompt, the expert answers the letter, chance is at least 1/k', async () => {
    const mc = Array.from({ length: 40 }, (_, i): TaskRow => ({
      prompt: `Which is ${i} + 1?`,
      choices: [`${i}`, `${i + 1}`, `${i + 2}`, `${i + 3}`],
      answer: 'ABCD'[i % 4],
      verifier: { type: 'choice' },
    }));
    const spec = taskFileSpec('mc', mc);
    const env = defineEnvironment(spec);
    expect(env.chance(1)).toBeCloseTo(0.25);
    expect(env.instructions).toBe('Answer with the letter of the correct choice.');
    const task = env.generate(3, 1, 'train');
    expect(task.prompt).toMatch(/\nA\) \d+\nB\) \d+\nC\) \d+\nD\) \d+$/);
    expect(await env.evaluate(task, answered(env.expert!(task)[0]))).toBe(1);
    // A level whose rows share one answer: a constant guess wins them all.
    expect(
      defineEnvironment(
        taskFileSpec('yes', [
          { prompt: 'a?', answer: 'yes' },
          { prompt: 'b?', answer: 'Yes', verifier: { type: 'exact', ignore_case: true } },
          { prompt: 'c?', answer: 'no' },
        ]),
      ).chance(1),
    ).toBeCloseTo(2 / 3);
    expect(defineEnvironment(taskFileSpec('sums', rows(30), { verifier: { type: 'number' } })).chance(2)).toBe(0);
  });

  it('a js verifier: no expert; a bad verdict is null, with the reason told and returned', async () => {
    const told: string[] = [];
    const js: VerifierConfig = {
      type: 'js',
      source: '(answer, row) => answer === "seven" ? 7 : Number(answer) === Number(row.answer)',
      timeout_ms: 500,
    };
    const spec = taskFileSpec('scripted', rows(20), { verifier: js, onUnscored: (_task, reason) => told.push(reason) });
    expect(spec.expert).toBeUndefined();
    const env = defineEnvironment(spec);
    const task = env.generate(2, 1, 'train');
    const row = task.data.row as TaskRow;
    expect(await env.evaluate(task, answered(String(row.answer)))).toBe(1);
    expect(await env.evaluate(task, answered('0'))).toBe(0);
    expect(await env.evaluate(task, answered('seven'))).toBeNull();
    expect(told).toEqual(['js verifier returned 7; it must return a number in [0, 1] or a boolean']);
    expect(await spec.verify(task, answered('seven'))).toEqual({ score: null, reason: told[0] });
    const foreign: Task = { ...task, data: {} };
    expect(await env.evaluate(foreign, answered('1'))).toBeNull();
  });
});

describe('the example task file (examples/tasks/word-problems.jsonl)', () => {
  it(
    'loads 300 problems at levels 1–3; the expert scores 1 and task-blind answers score 0',
    { timeout: 60_000 },
    async () => {
      const bytes = readFileSync(new URL('../../examples/tasks/word-problems.jsonl', import.meta.url));
      expect(bytes.byteLength).toBeLessThan(80 * 1024);
      const rows = await readTaskFile(new Uint8Array(bytes), 'word-problems.jsonl');
      expect(rows).toHaveLength(300);
      const env = defineEnvironment(taskFileSpec('word_problems', rows));
      expect(env.difficulties).toEqual([1, 2, 3]);
      for (const level of env.difficulties) expect(env.chance(level)).toBeLessThanOrEqual(0.1);
      let blindWins = 0;
      let n = 0;
      for (const level of env.difficulties) {
        for (const split of ['train', 'test'] as const) {
          for (let seed = 0; seed < 8; seed++) {
            const task = env.generate(seed, level, split);
            const expert = await expertTrajectory(env, task);
            expect([task.prompt, expert.judge_score]).toEqual([task.prompt, 1]);
            for (const blind of ['0', '1', '', 'I do not know', '2'])
              blindWins += (await env.evaluate(task, answered(blind))) ?? 0;
            n += 5;
          }
        }
      }
      expect(blindWins / n).toBeLessThan(0.05);
    },
  );
});
