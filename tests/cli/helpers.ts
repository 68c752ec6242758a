import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.ts';

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'spindle-cli-'));
}

/** Runs the CLI in-process, capturing its output. */
export async function cli(cwd: string, ...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { cwd, out: (l) => out.push(l), err: (l) => err.push(l), interactive: false, signal: new AbortController().signal });
  return { code, out: out.join('\n'), err: err.join('\n') };
}
