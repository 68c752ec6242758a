/**
 * Every command the README shows, verbatim and in its order, in one fresh clone, as a new user runs them,
 * each kept to seconds by SPINDLE_SMALL=1 (src/cli/commands/small.ts): what each line needs, the lines
 * before it made. Minutes of work at full size, so it runs in `npm run test:readme`, not in `npm test`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parquetToTrajectories } from '../../src/export/parquet.ts';
import { cli } from './helpers.ts';
import { README_COMMANDS, freshClone } from './readme.ts';

const dir = freshClone();
const before = process.env.SPINDLE_SMALL;
beforeAll(() => {
  process.env.SPINDLE_SMALL = '1';
});
afterAll(() => {
  if (before === undefined) delete process.env.SPINDLE_SMALL;
  else process.env.SPINDLE_SMALL = before;
});

describe("the README's commands, in order, in a fresh clone", () => {
  const outputs = new Map<string, string>();
  it.each(README_COMMANDS.map((argv) => [argv.join(' '), argv]))('%s', async (line, argv) => {
    const r = await cli(dir, ...argv);
    expect(r.code, `${line}: ${r.err}`).toBe(0);
    outputs.set(line as string, r.out);
  });

  it('left what the README says they make', async () => {
    const parquet = join(dir, 'trajectories', 'trajectories.parquet');
    const exported = await parquetToTrajectories(readFileSync(parquet), parquet);
    // Both the run's training episodes and its held-out evaluations are stored; only the former are exported.
    expect(exported.length).toBeGreaterThan(0);
    expect(new Set(exported.map((t) => t.split))).toEqual(new Set(['train']));
    const sft = [...outputs].find(([line]) => line.startsWith('sft '))![1];
    // SFT trained on the successes alone.
    const successes = exported.filter((t) => t.success === true).length;
    expect(sft).toContain(
      `sft: left out ${exported.length - successes} rows that did not succeed (--min-score 0 keeps every row)\nsft: ${successes} examples from 1 file(s)`,
    );
    for (const file of [
      'sft-out/adapter.zip',
      'transfer.yaml',
      'instructions.jsonl',
      'adapter.zip',
      'merged/config.json',
      'merged/generation_config.json',
      'merged/model.safetensors',
    ]) {
      expect(existsSync(join(dir, file)), file).toBe(true);
    }
    expect(readdirSync(join(dir, 'skills')).filter((f) => f.endsWith('.md')).length).toBeGreaterThan(0);
  });
});
