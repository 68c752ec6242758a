/**
 * One writer per store folder, with real processes: while one process writes a store, `spindle train` on
 * it is refused by name (exit 1) and the first one's run is intact afterwards; readers still read. A
 * writer killed with SIGKILL leaves its lock, which the next writer takes over; SIGTERM releases it.
 * Locks that cannot be checked (another host, an empty file) are refused naming what to do.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import { stringifyRunConfig } from '../../src/config/yaml.ts';
import { openFileStore, SNAPSHOT_FILE } from '../../src/store/file-store.ts';
import { getRun, getTrajectory, listRuns, putTrajectory, StoreError } from '../../src/store/index.ts';
import { LOCK_FILE, type LockOwner } from '../../src/store/store-lock.ts';
import { makeTrajectory } from './fixtures.ts';

const ROOT = join(import.meta.dirname, '../..');
const HOLDER = join(import.meta.dirname, 'hold-store.ts');
const BIN = join(ROOT, 'bin/spindle.mjs');

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'spindle-lock-'));
  cleanups.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
  err: string;
}

function exited(child: ChildProcess, output: { out: string; err: string }): Promise<Exit> {
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, ...output })));
}

/** hold-store.ts writing the store in `dir`, once it says it is ready. */
async function startHolder(dir: string): Promise<{ child: ChildProcess; done: Promise<Exit> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', HOLDER, dir], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  cleanups.push(() => child.kill('SIGKILL'));
  const output = { out: '', err: '' };
  child.stderr!.on('data', (c: Buffer) => (output.err += c.toString()));
  const done = exited(child, output);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      output.out += c.toString();
      if (output.out.includes('ready\n')) resolve();
    });
    void done.then((e) => reject(new Error(`the holder exited before it was ready: ${e.err}`)));
  });
  return { child, done };
}

function spindle(cwd: string, ...args: string[]): Promise<Exit> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  cleanups.push(() => child.kill('SIGKILL'));
  const output = { out: '', err: '' };
  child.stdout!.on('data', (c: Buffer) => (output.out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output.err += c.toString()));
  return exited(child, output);
}

const lockOf = (dir: string) => JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')) as LockOwner;

describe('one writer per store', () => {
  it('a second `spindle train` on a store another process writes is refused by name; the first run is intact', async () => {
    const work = tempDir();
    const dir = join(work, 'store');
    writeFileSync(join(work, 'b.yaml'), stringifyRunConfig(DEFAULT_CONFIG));
    const holder = await startHolder(dir);
    const pid = holder.child.pid!;
    expect(lockOf(dir)).toMatchObject({ pid, hostname: hostname(), command: expect.stringContaining('hold-store') });

    const second = await spindle(work, 'train', '--config', 'b.yaml', '--store', dir);
    expect(second.code).toBe(1);
    expect(second.err).toContain(
      `spindle: The store ${dir} is in use by process ${pid} (hold-store ${dir}, running since `,
    );
    expect(second.err).toContain('wait for it to finish or use another --store.');
    // In this process too, and readers still read what the writer saved.
    const refused = await openFileStore(dir).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StoreError);
    expect((refused as StoreError).code).toBe('locked');
    const reader = await openFileStore(dir, { readOnly: true });
    expect((await listRuns(reader)).map((r) => r.id)).toEqual(['run-a']);
    await reader.close();
    const exported = await spindle(
      work,
      'export',
      'trajectories',
      '--format',
      'jsonl',
      '--output',
      'out',
      '--store',
      dir,
    );
    expect(exported.out).toContain('wrote 2 trajectories');

    holder.child.stdin!.end('finish\n');
    expect(await holder.done).toMatchObject({ code: 0, out: 'ready\nclosed\n' });
    expect(readdirSync(dir)).toEqual([SNAPSHOT_FILE]); // the lock went with the close
    const after = await openFileStore(dir, { readOnly: true });
    expect((await getRun(after, 'run-a'))?.status).toBe('completed');
    for (const id of ['a-1', 'a-2', 'a-3']) expect(await getTrajectory(after, id), id).toBeTruthy();
    await after.close();
  });

  it('a writer killed with SIGKILL leaves its lock behind, and the next writer takes it over', async () => {
    const dir = join(tempDir(), 'store');
    const holder = await startHolder(dir);
    holder.child.kill('SIGKILL');
    expect((await holder.done).signal).toBe('SIGKILL');
    expect(lockOf(dir).pid).toBe(holder.child.pid);
    const next = await openFileStore(dir);
    expect(lockOf(dir).pid).toBe(process.pid);
    expect(await getTrajectory(next, 'a-2')).toBeTruthy();
    await next.close();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });

  it('SIGTERM releases the lock, and the process still ends by the signal', async () => {
    const dir = join(tempDir(), 'store');
    const holder = await startHolder(dir);
    holder.child.kill('SIGTERM');
    expect((await holder.done).signal).toBe('SIGTERM');
    expect(readdirSync(dir)).toEqual([SNAPSHOT_FILE]);
  });

  it('refuses locks it cannot check, saying what to do, and takes over one whose pid now runs another process', async () => {
    const dir = tempDir();
    const lock = join(dir, LOCK_FILE);
    const owner: LockOwner = {
      pid: process.pid,
      hostname: 'build-7',
      started_at: Date.UTC(2030, 0, 1),
      command: 'spindle train --store s',
    };
    writeFileSync(lock, JSON.stringify(owner));
    await expect(openFileStore(dir)).rejects.toThrow(
      `is in use by process ${process.pid} on host build-7 (spindle train --store s, running since 2030-01-01T00:00:00Z); wait for it to finish or use another --store. If that host no longer runs it, delete ${lock}.`,
    );
    writeFileSync(lock, '');
    await expect(openFileStore(dir)).rejects.toThrow(`is locked by ${lock}, which is empty or unreadable`);
    // This host, this pid, another start time: a process that had this pid before, gone.
    writeFileSync(lock, JSON.stringify({ ...owner, hostname: hostname() }));
    const store = await openFileStore(dir);
    expect(lockOf(dir).started_at).not.toBe(owner.started_at);
    await expect(openFileStore(dir)).rejects.toThrow(
      `is already open for writing in this process (pid ${process.pid}); close it before opening it again.`,
    );
    await store.close();
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    writeFileSync(lock, JSON.stringify({ ...owner, hostname: hostname(), pid: dead }));
    await (await openFileStore(dir)).close();
    expect(existsSync(lock)).toBe(false);
  });

  it('a read-only open takes no lock and never saves', async () => {
    const dir = tempDir();
    const first = await openFileStore(dir);
    await putTrajectory(first, makeTrajectory({ id: 'saved' }));
    await first.close();
    const before = readFileSync(join(dir, SNAPSHOT_FILE));
    const reader = await openFileStore(dir, { readOnly: true });
    const writer = await openFileStore(dir); // not held back by the reader
    await putTrajectory(reader, makeTrajectory({ id: 'only-in-memory' }));
    await reader.close();
    await writer.close();
    expect(readFileSync(join(dir, SNAPSHOT_FILE))).toEqual(before);
  });
});
