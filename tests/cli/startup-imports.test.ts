/**
 * The command list, every command's `--help` and an argument error need only the option tables: none of
 * them loads tfjs, onnxruntime, QuickJS, the store's IndexedDB, Parquet or git, which come in only once a
 * command runs (src/cli/pipeline.ts). Checked on the modules a real process resolves, not on how long it takes.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const HEAVY =
  /\/node_modules\/(@tensorflow\/[^/]+|onnxruntime-[^/]+|quickjs-emscripten-core|@jitl\/[^/]+|fake-indexeddb|idb|hyparquet[^/]*|isomorphic-git)\//;

/** The heavy packages each invocation resolved, by `spindle ARGS` (the CLI's own loading under "start-up"). */
function heavyByInvocation(log: string): Map<string, string[]> {
  const found = new Map<string, string[]>([['start-up', []]]);
  let current = 'start-up';
  for (const line of log.split('\n')) {
    if (line.startsWith('# ')) found.set((current = line.slice(2).trim()), []);
    const heavy = HEAVY.exec(line)?.[1];
    if (heavy && !found.get(current)!.includes(heavy)) found.get(current)!.push(heavy);
  }
  return found;
}

describe('CLI start-up', () => {
  it('loads no heavy module for the command list, any --help or an unknown option; a command that runs does', () => {
    const log = join(mkdtempSync(join(tmpdir(), 'spindle-imports-')), 'imports.log');
    const child = spawnSync(
      process.execPath,
      [
        '--import',
        join(import.meta.dirname, 'record-imports.mjs'),
        '--import',
        'tsx',
        join(import.meta.dirname, 'startup-imports.child.ts'),
      ],
      {
        cwd: join(import.meta.dirname, '../..'),
        env: { ...process.env, IMPORT_LOG: log },
        encoding: 'utf8',
      },
    );
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    const text = readFileSync(log, 'utf8');
    expect(text).toMatch(/\/src\/cli\/main\.ts\n/); // the log sees the CLI's own modules
    const heavy = heavyByInvocation(text);
    expect(heavy.get('spindle envs')).toContain('@tensorflow/tfjs');
    heavy.delete('spindle envs');
    expect(heavy.size).toBeGreaterThan(20); // start-up, the list, the errors, a --help per command
    expect(Object.fromEntries([...heavy].filter(([, packages]) => packages.length))).toEqual({});
  }, 60_000);
});
