/**
 * One writer per store folder. Whoever opens a file store to write creates `<dir>/spindle.db.lock` with
 * O_EXCL, holding its pid, host, process start time and command line; a second writer finds it and is
 * refused by name. The lock is released on close and when the process exits (process.exit included), and
 * on SIGINT, SIGTERM or SIGHUP when nothing else handles the signal (it is then raised again, so the
 * process still ends as the signal says). A process that died without releasing (SIGKILL, a crash) leaves
 * its lock behind: the next writer on the same host sees that its pid is gone, or now belongs to a
 * process that started at another time, and takes the lock over. A lock from another host cannot be
 * checked and is refused, naming the host.
 */
import { closeSync, linkSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, join } from 'node:path';
import { StoreError } from './errors.ts';

export const LOCK_FILE = 'spindle.db.lock';

export interface LockOwner {
  pid: number;
  hostname: string;
  /** When the process started, ms since the epoch (from /proc on Linux, else the process's time origin). */
  started_at: number;
  /** Its command line, e.g. `spindle train --config a.yaml --store s`. */
  command: string;
}

/** Lock files this process holds, by path, with what removes each. */
const held = new Map<string, () => void>();

/** Whether a process with this id exists (EPERM: it does, under another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * When process `pid` started (ms since the epoch), from /proc on Linux; null elsewhere or when it is
 * gone. The kernel counts in clock ticks since boot; 100 per second on every Linux Node supports.
 */
function procStartedAt(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    const boot = Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1]);
    return Number.isFinite(ticks) && Number.isFinite(boot) ? boot * 1000 + ticks * 10 : null;
  } catch {
    return null;
  }
}

const ownStart = procStartedAt(process.pid) ?? Math.round(performance.timeOrigin);

function ownCommand(): string {
  const script = process.argv[1] ? basename(process.argv[1]).replace(/\.[cm]?[jt]s$/, '') : basename(process.argv[0]);
  const line = [script, ...process.argv.slice(2)].join(' ');
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

function parseOwner(text: string): LockOwner | null {
  try {
    const owner = JSON.parse(text) as Partial<LockOwner>;
    const ok =
      Number.isInteger(owner.pid) &&
      typeof owner.hostname === 'string' &&
      typeof owner.started_at === 'number' &&
      typeof owner.command === 'string';
    return ok ? (owner as LockOwner) : null;
  } catch {
    return null;
  }
}

/** The file's text, or null when it is gone. */
function readQuiet(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** A lock left by a process of this host that is gone: its pid is free, or taken by a process started at another time. */
function isStale(owner: LockOwner, path: string): boolean {
  if (owner.hostname !== hostname()) return false;
  if (owner.pid === process.pid) return !held.has(path) && owner.started_at !== ownStart;
  if (!processAlive(owner.pid)) return true;
  const started = procStartedAt(owner.pid);
  return started !== null && Math.abs(started - owner.started_at) > 1000;
}

function lockedError(dir: string, path: string, owner: LockOwner | null): StoreError {
  if (!owner) {
    return new StoreError(
      'locked',
      `The store ${dir} is locked by ${path}, which is empty or unreadable: another Spindle process is taking the lock ` +
        `right now, or one was killed while taking it. If no Spindle process uses this store, delete ${path}.`,
    );
  }
  if (owner.pid === process.pid && owner.hostname === hostname()) {
    return new StoreError(
      'locked',
      `The store ${dir} is already open for writing in this process (pid ${owner.pid}); close it before opening it again.`,
    );
  }
  const host = owner.hostname === hostname() ? '' : ` on host ${owner.hostname}`;
  const since = new Date(owner.started_at).toISOString().replace(/\.\d+Z$/, 'Z');
  const remote = host ? ` If that host no longer runs it, delete ${path}.` : '';
  return new StoreError(
    'locked',
    `The store ${dir} is in use by process ${owner.pid}${host} (${owner.command}, running since ${since}); ` +
      `wait for it to finish or use another --store.${remote}`,
  );
}

/**
 * Moves a stale lock out of the way, unless another process replaced it since it was read (then that one
 * is put back): two processes taking over the same stale lock at once must not delete each other's.
 */
function removeStale(path: string, seen: string): void {
  const aside = `${path}.stale-${process.pid}`;
  try {
    renameSync(path, aside);
  } catch {
    return; // gone already: someone else took it over
  }
  try {
    if (readFileSync(aside, 'utf8') !== seen) linkSync(aside, path);
  } catch {
    // a third lock appeared meanwhile: it stands, and the next attempt reads it
  } finally {
    rmSync(aside, { force: true });
  }
}

/**
 * Takes the write lock of the store folder `dir`; returns its release (idempotent). Throws a StoreError
 * 'locked' naming the holder when another live process (or this one) has it.
 */
export function lockStoreFolder(dir: string): () => void {
  const path = join(dir, LOCK_FILE);
  const me: LockOwner = { pid: process.pid, hostname: hostname(), started_at: ownStart, command: ownCommand() };
  if (held.has(path)) throw lockedError(dir, path, me);
  // A few attempts: the lock may be released, or a stale one taken over, between two steps here.
  for (let attempt = 0; ; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw lockFileError(path, e);
      const text = readQuiet(path);
      const owner = text ? parseOwner(text) : null;
      if (attempt < 3 && text === null) continue;
      if (attempt < 3 && owner && isStale(owner, path)) {
        removeStale(path, text!);
        continue;
      }
      throw lockedError(dir, path, owner);
    }
    try {
      const bytes = new TextEncoder().encode(JSON.stringify(me) + '\n');
      if (writeSync(fd, bytes) !== bytes.byteLength)
        throw Object.assign(new Error('no space left on device (the lock file was written short)'), { code: 'ENOSPC' });
    } catch (e) {
      closeSync(fd);
      rmSync(path, { force: true });
      throw lockFileError(path, e);
    }
    closeSync(fd);
    return hold(path);
  }
}

function lockFileError(path: string, e: unknown): StoreError {
  const code = (e as NodeJS.ErrnoException).code;
  const fix =
    code === 'ENOSPC' || code === 'EDQUOT' ? ' The disk is full: free disk space and run the command again.' : '';
  return new StoreError('io', `Could not create the store's lock file ${path}: ${(e as Error).message}.${fix}`, {
    cause: e,
  });
}

function hold(path: string): () => void {
  const release = () => {
    if (held.get(path) !== release) return;
    held.delete(path);
    // Only our own lock: one someone removed by hand and another writer has taken since stays theirs.
    const owner = parseOwner(readQuiet(path) ?? '');
    if (owner?.pid === process.pid && owner.started_at === ownStart) rmSync(path, { force: true });
    if (!held.size) unwatchProcess();
  };
  if (!held.size) watchProcess();
  held.set(path, release);
  return release;
}

function releaseAll(): void {
  for (const release of [...held.values()]) release();
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Releases the locks and ends the process as the signal would have, unless something else handles the signal. */
function onSignal(signal: NodeJS.Signals): void {
  if (process.listenerCount(signal) > 1) return;
  releaseAll();
  process.kill(process.pid, signal);
}

function watchProcess(): void {
  process.on('exit', releaseAll);
  for (const signal of SIGNALS) process.on(signal, onSignal);
}

function unwatchProcess(): void {
  process.off('exit', releaseAll);
  for (const signal of SIGNALS) process.off(signal, onSignal);
}
