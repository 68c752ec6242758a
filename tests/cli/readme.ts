/** The README's `npx spindle …` lines as argv, and a folder that stands for a fresh clone to run them in. */
import { readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './helpers.ts';

const REPO = join(import.meta.dirname, '../..');
const README = readFileSync(join(REPO, 'README.md'), 'utf8');

/** Each shown command as argv, in the README's order (comments and `npx spindle` dropped; these lines use no quotes). */
export const README_COMMANDS: string[][] = [...README.matchAll(/^npx spindle (.+)$/gm)].map((m) =>
  m[1]
    .replace(/\s+#.*$/, '')
    .trim()
    .split(/\s+/),
);

/**
 * An empty folder with the clone's example files, where the README's relative paths (`examples/…`) resolve;
 * the shipped model is found beside the code, as in a clone.
 */
export function freshClone(): string {
  const dir = tempDir();
  symlinkSync(join(REPO, 'examples'), join(dir, 'examples'));
  return dir;
}
