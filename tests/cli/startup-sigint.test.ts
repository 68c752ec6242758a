/**
 * The first Ctrl-C is honoured even while the CLI is still loading (tsx and the core take a second or
 * more): the process stops with exit code 130 and says so, instead of being killed by the signal
 * before any handler exists.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const BIN = join(import.meta.dirname, '../../bin/spindle.mjs');

/** Whether the child has become node running spindle.mjs (Linux: /proc; elsewhere unknown, so false). */
function execed(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('spindle.mjs');
  } catch {
    return false;
  }
}

describe('Ctrl-C during start-up', () => {
  it('stops with 130 and a message, not a death by signal', async () => {
    const child = spawn(process.execPath, [BIN, '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
    // 300 ms after node starts on spindle.mjs: its first lines have run (node boots in ~50 ms), and the
    // start-up (tsx and the core, ~1 s) is far from over. Node's own SIGINT handler (it restores the
    // terminal, then dies of the signal) cannot be told apart from ours in /proc, so time it is.
    const started = Date.now();
    while (!execed(child.pid!) && Date.now() - started < 2000) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 300));
    child.kill('SIGINT');
    expect(await exited).toEqual({ code: 130, signal: null });
    expect(stderr).toContain('spindle: interrupted during start-up; nothing was run');
    expect(stdout).toBe(''); // the command did not run
  }, 20_000);
});
