/**
 * The README's commands stay real: every `npx spindle …` line it shows names a command and flags the CLI
 * has (parsed strictly, as if run, then --help instead of the work), and the quick ones run verbatim.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, tempDir } from './helpers.ts';

const README = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8');
/** Each shown command as argv (comments and `npx spindle` dropped; quotes are not used in these lines). */
const commands = [...README.matchAll(/^npx spindle (.+)$/gm)].map((m) => m[1].replace(/\s+#.*$/, '').trim().split(/\s+/));

describe('the README\'s CLI lines', () => {
  it('are there', () => {
    expect(commands.length).toBeGreaterThan(10);
  });

  it.each(commands.map((argv) => [argv.join(' '), argv]))('%s parses', async (_line, argv) => {
    const r = await cli(tempDir(), ...(argv as string[]), '--help');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^Usage: spindle /);
  });

  it('the quick ones run verbatim in a fresh folder: config init and set, envs, envs add and audit', async () => {
    const dir = tempDir();
    const quick = commands.filter((a) => (a[0] === 'config' && ['init', 'set'].includes(a[1])) || a[0] === 'envs');
    expect(quick.length).toBeGreaterThanOrEqual(5);
    const repo = join(import.meta.dirname, '../..');
    for (const argv of quick) {
      // Paths in the README are relative to the repository.
      const r = await cli(argv.some((a) => a.startsWith('examples/')) ? repo : dir, ...argv, ...(argv[1] === 'add' ? ['--store', join(dir, '.spindle')] : []));
      expect(r.code, `${argv.join(' ')}: ${r.err}`).toBe(0);
    }
  }, 60_000);
});
