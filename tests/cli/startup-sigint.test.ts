/**
 * The first Ctrl-C is honoured even while the CLI is still loading (tsx, then the pipeline once a command
 * runs, take a second or more): the process stops with exit code 130 and says so, instead of being killed
 * by the signal before any handler exists or starting the command.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliWithSignal, tempDir } from './helpers.ts';

const BIN = join(import.meta.dirname, '../../bin/spindle.mjs');
const READY = 'spindle: start-up handler installed\n';

describe('Ctrl-C during start-up', () => {
  it('stops with 130 and a message, not a death by signal', async () => {
    // SPINDLE_REPORT_STARTUP makes spindle.mjs say when its handler exists; the signal goes at that line,
    // while tsx and the core (a second or more) are still loading.
    const child = spawn(process.execPath, [BIN, '--help'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, SPINDLE_REPORT_STARTUP: '1' },
    });
    let stderr = '';
    let stdout = '';
    let signalled = false;
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
      if (!signalled && stderr.includes(READY)) {
        signalled = true;
        child.kill('SIGINT');
      }
    });
    const exited = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    expect(signalled).toBe(true);
    expect(exited).toEqual({ code: 130, signal: null });
    expect(stderr).toContain('spindle: interrupted during start-up; nothing was run');
    expect(stdout).toBe(''); // the command did not run
  }, 60_000);

  it('stops with 130 before the command starts when Ctrl-C came while the pipeline loaded', async () => {
    const pressed = new AbortController();
    pressed.abort();
    // Without the Ctrl-C this fails on the missing config (code 1): the command itself never ran.
    const r = await cliWithSignal(pressed.signal, tempDir(), 'train', '--config', 'missing.yaml');
    expect(r).toMatchObject({ code: 130, out: '' });
    expect(r.err).toBe('spindle: interrupted during start-up; nothing was run');
  });
});
