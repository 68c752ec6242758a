/**
 * Writing the file store's snapshot so that a failure at any point leaves the previous one as it was.
 * The bytes go to a temporary file, every one of them: a short write is continued where it stopped, and
 * a write that makes no progress fails as a full disk. After the fsync the file's size is checked against
 * what was meant to be written; only then is it renamed over the old snapshot (and the folder fsynced, so
 * the rename itself survives a power cut). On any failure the temporary file is removed and the old
 * snapshot is untouched. The one call that writes bytes goes through `SnapshotIo`, so a test can make the
 * disk write short without filling one.
 */
import { closeSync, existsSync, fstatSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { formatBytes } from './quota.ts';

export interface SnapshotIo {
  /** As `fs.writeSync(fd, bytes, offset, length)`: the number of bytes written, which may be fewer than asked. */
  write(fd: number, bytes: Uint8Array, offset: number, length: number): number;
}

export const diskIo: SnapshotIo = { write: (fd, bytes, offset, length) => writeSync(fd, bytes, offset, length) };

/** Writes `bytes` to `path` through the temporary file `tmp`, all or nothing; throws with the file system's error. */
export function writeFileAtomically(path: string, tmp: string, bytes: Uint8Array, io: SnapshotIo = diskIo): void {
  try {
    const fd = openSync(tmp, 'w');
    try {
      let written = 0;
      while (written < bytes.byteLength) {
        const n = io.write(fd, bytes, written, bytes.byteLength - written);
        if (!(n > 0)) throw noSpace(`the disk took ${written} of ${bytes.byteLength} bytes and then no more`);
        written += n;
      }
      fsyncSync(fd);
      const size = fstatSync(fd).size;
      if (size !== bytes.byteLength) throw noSpace(`the file holds ${size} of the ${bytes.byteLength} bytes written`);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (e) {
    try {
      rmSync(tmp, { force: true });
    } catch {
      // what cannot be removed now (not a file) is removed as a stale temporary file on a later open
    }
    throw e;
  }
  syncFolder(dirname(path));
}

function noSpace(detail: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`no space left on device (${detail})`), { code: 'ENOSPC' });
}

/** Best effort: some platforms (Windows) cannot open a folder to fsync it. */
function syncFolder(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // the rename is done; only its durability across a power cut is left to the OS
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Why a save of `path` failed and what to do, as one message. `bytes` is the snapshot's size (a full
 * disk needs at least that much free).
 */
export function saveFailureMessage(path: string, error: unknown, bytes: number): string {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const detail = error instanceof Error ? error.message : String(error);
  const kept = existsSync(path)
    ? `Nothing was overwritten: ${path} still holds its last complete save; what was written since is not on disk.`
    : 'No snapshot was written.';
  const fix =
    code === 'ENOSPC' || code === 'EDQUOT'
      ? `The disk is full: free disk space (the store needs about ${formatBytes(bytes)} free) and run the command again.`
      : code === 'EACCES' || code === 'EPERM' || code === 'EROFS'
        ? `The folder ${dirname(path)} is not writable: check its permissions, or use another store folder.`
        : 'Check the disk, then run the command again.';
  return `${saveFailureLead(path)}: ${detail}. ${kept} ${fix}`;
}

/** How every message of a failed save of `path` begins (a caller can tell that an error already says it). */
export function saveFailureLead(path: string): string {
  return `Could not save the Spindle store ${path}`;
}
