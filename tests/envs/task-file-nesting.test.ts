/**
 * A task-file row nested deeper than 100 levels is refused for its row and field ("line 2: "meta" is
 * nested too deeply (more than 100 levels)"), not with "Maximum call stack size exceeded" and no row.
 */
import { describe, expect, it } from 'vitest';
import { readTaskFile } from '../../src/envs/task-file/index.ts';
import { MAX_NESTING } from '../../src/envs/task-file/rows.ts';

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const row = (extra = '') => `{"prompt": "What is 1+1?", "answer": "2"${extra}}`;

describe('deeply nested task rows', () => {
  it('names the line and the field of a row 10,000 levels deep', async () => {
    const text = [row(), row(`, "meta": ${nested(10_000)}`), row()].join('\n');
    await expect(readTaskFile(text, 'deep.jsonl')).rejects.toThrow(
      `deep.jsonl: line 2: "meta" is nested too deeply (more than ${MAX_NESTING} levels)`,
    );
  });

  it('does the same for a nested prompt and for an item of a JSON array', async () => {
    const prompt = `{"prompt": ${nested(10_000)}, "answer": "2"}`;
    await expect(readTaskFile([row(), prompt].join('\n'), 'p.jsonl')).rejects.toThrow(
      'p.jsonl: line 2: "prompt" is nested too deeply',
    );
    await expect(readTaskFile(`[${row()}, ${row(`, "meta": {"a": ${nested(5000)}}`)}]`, 'a.json')).rejects.toThrow(
      'a.json: item 2: "meta" is nested too deeply',
    );
  });

  it('keeps a row nested 100 levels deep', async () => {
    const rows = await readTaskFile(row(`, "meta": ${nested(MAX_NESTING)}`), 'ok.jsonl');
    expect(rows).toHaveLength(1);
    expect(rows[0].extra).toHaveProperty('meta');
  });
});
