/**
 * A real small file system for full-disk tests: a 64 KiB tmpfs mounted on a fresh folder, where the
 * machine allows it (root with mount rights, Linux). Where it does not, `mountSmallDisk` returns null and
 * the tests fall back to the file store's injected short write, so they assert the same things either way.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SnapshotIo } from '../../src/store/snapshot-file.ts';

export interface SmallDisk {
  dir: string;
  unmount(): void;
}

export const SMALL_DISK_BYTES = 64 * 1024;

export function mountSmallDisk(): SmallDisk | null {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return null;
  const dir = mkdtempSync(join(tmpdir(), 'spindle-small-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${SMALL_DISK_BYTES}`, 'tmpfs', dir], { stdio: 'ignore' });
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
  return {
    dir,
    unmount() {
      try {
        execFileSync('umount', [dir], { stdio: 'ignore' });
      } catch {
        execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Writes at most `chunk` bytes a call, really: the short writes a busy or slow disk makes. */
export function shortWrites(chunk: number): SnapshotIo {
  return { write: (fd, bytes, offset, length) => writeSync(fd, bytes, offset, Math.min(length, chunk)) };
}

/** Writes `room` bytes in all, really, then takes no more: a disk that fills up mid-save. */
export function fillingDisk(room: number): SnapshotIo {
  let taken = 0;
  return {
    write(fd, bytes, offset, length) {
      const n = Math.min(length, room - taken);
      if (n <= 0) return 0;
      taken += n;
      return writeSync(fd, bytes, offset, n);
    },
  };
}

/** Says every byte was written but keeps only the first `keep`: what only the size check can catch. */
export function lyingDisk(keep: number): SnapshotIo {
  let kept = 0;
  return {
    write(fd, bytes, offset, length) {
      const n = Math.min(length, keep - kept);
      if (n > 0) kept += writeSync(fd, bytes, offset, n);
      return length;
    },
  };
}
