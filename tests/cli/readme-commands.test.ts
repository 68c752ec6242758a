/**
 * The README's commands stay real. Every `npx spindle …` line it shows names a command and flags the CLI has
 * (the argument parser's own strict check); the lines that need nothing made before them run here verbatim
 * in a fresh folder laid out as a clone; readme-sequence.readme.test.ts (`npm run test:readme`) runs every
 * line in order, as a user would.
 */
import { parseArgs } from 'node:util';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/commands/index.ts';
import { cli } from './helpers.ts';
import { README_COMMANDS, freshClone } from './readme.ts';

describe("the README's CLI lines", () => {
  it('are there', () => {
    expect(README_COMMANDS.length).toBeGreaterThan(12);
  });

  it.each(README_COMMANDS.map((argv) => [argv.join(' '), argv]))('%s names a command and its flags', (_line, argv) => {
    const command = [...COMMANDS]
      .sort((a, b) => b.name.length - a.name.length)
      .find((c) => argv.join(' ').startsWith(`${c.name} `) || argv.join(' ') === c.name);
    expect(command, `no command for ${argv.join(' ')}`).toBeDefined();
    const rest = argv.slice(command!.name.split(' ').length);
    expect(() =>
      parseArgs({ args: rest, options: command!.options, allowPositionals: command!.args !== undefined, strict: true }),
    ).not.toThrow();
  });

  // An environment audit for each `envs` line: about 25 s on a loaded 2-core machine, where the 60 s default ran out once.
  it(
    'the ones that need nothing made first run verbatim in a fresh clone: config, envs, transfer init',
    { timeout: 120_000 },
    async () => {
      const dir = freshClone();
      const quick = README_COMMANDS.filter((a) => a[0] === 'config' || a[0] === 'envs' || a[0] === 'transfer');
      expect(quick.map((a) => a.slice(0, 2).join(' '))).toEqual(
        expect.arrayContaining(['config init', 'config set', 'envs add', 'envs audit', 'transfer init']),
      );
      for (const argv of quick) {
        const r = await cli(dir, ...argv);
        expect(r.code, `${argv.join(' ')}: ${r.err}`).toBe(0);
      }
      // transfer init writes its config where the README says, and says how to name a source when there is none yet.
      const transfer = await cli(dir, ...quick.find((a) => a[0] === 'transfer')!);
      expect(transfer.out).toMatch(/^wrote .*transfer\.yaml$/m);
      expect(transfer.err).toMatch(
        /no source checkpoint yet .*spindle config set --config transfer\.yaml transfer\.source_checkpoint RUN_ID/,
      );
    },
  );
});
