/**
 * A full disk never costs the store its last good snapshot: a save that cannot write every byte fails by
 * name (ENOSPC, "free disk space"), the snapshot on disk stays as it was and decodes with all its runs,
 * the temporary file is removed, and the next write and the close say so. Once on the file store's
 * injected disk write (short writes, a disk that fills, one that lies about what it wrote) and once on
 * a real 64 KiB tmpfs where this machine can mount one (elsewhere that test runs on the injected disk).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import { openFileStore, SNAPSHOT_FILE, type FileStore } from '../../src/store/file-store.ts';
import {
  createRun,
  getRun,
  getTrajectory,
  listRuns,
  loadLatestCheckpoint,
  putTrajectories,
  putTrajectory,
  saveCheckpoint,
  setRunStatus,
  StoreError,
} from '../../src/store/index.ts';
import type { SnapshotIo } from '../../src/store/snapshot-file.ts';
import { makeTrajectory } from './fixtures.ts';
import { fillingDisk, lyingDisk, mountSmallDisk, shortWrites, SMALL_DISK_BYTES, type SmallDisk } from './small-disk.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'spindle-full-disk-'));
  cleanups.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

/** A store in `dir` holding one finished run with two trajectories and a checkpoint; returns its snapshot's bytes. */
async function storeWithRun(dir: string): Promise<Buffer> {
  const s = await openFileStore(dir);
  await createRun(s, DEFAULT_CONFIG, { id: 'run-a' });
  await setRunStatus(s, 'run-a', 'completed');
  await putTrajectories(s, [
    makeTrajectory({ id: 'kept-1', group_id: 'ga' }),
    makeTrajectory({ id: 'kept-2', group_id: 'ga' }),
  ]);
  await saveCheckpoint(s, { run_id: 'run-a', step: 1, adapter: new Float32Array([1, 2, 3]).buffer, optimizer: null });
  await s.close();
  return readFileSync(join(dir, SNAPSHOT_FILE));
}

/** What a store holds after a failed save: exactly the run written before it. */
async function expectRunIntact(dir: string): Promise<void> {
  const s = await openFileStore(dir, { readOnly: true });
  expect((await listRuns(s)).map((r) => r.id)).toEqual(['run-a']);
  expect((await getRun(s, 'run-a'))?.status).toBe('completed');
  expect(await getTrajectory(s, 'kept-1')).toBeTruthy();
  expect(await getTrajectory(s, 'kept-2')).toBeTruthy();
  expect(Array.from(new Float32Array((await loadLatestCheckpoint(s, 'run-a'))!.adapter))).toEqual([1, 2, 3]);
  await s.close();
}

/** One write the disk cannot hold: a trajectory with an answer of `chars` characters. */
function writeTooMuch(s: FileStore, chars: number): Promise<void> {
  return putTrajectory(s, makeTrajectory({ id: 'too-big', final_response: 'x'.repeat(chars) }));
}

const FULL =
  /Could not save the Spindle store .*spindle\.db: no space left on device.*still holds its last complete save.*free disk space/s;

describe('a full disk', () => {
  it('a save the disk cannot finish fails by name, keeps the old snapshot, and the next write and the close say so', async () => {
    const dir = tempDir();
    const before = await storeWithRun(dir);
    const s = await openFileStore(dir, { io: fillingDisk(before.byteLength) });
    await writeTooMuch(s, 20_000);
    await expect(s.flush()).rejects.toThrow(FULL);
    const next = await putTrajectory(s, makeTrajectory({ id: 'after' })).catch((e: unknown) => e);
    expect(next).toBeInstanceOf(StoreError);
    expect((next as Error).message).toMatch(FULL);
    await expect(s.close()).rejects.toThrow(FULL);
    expect(readFileSync(join(dir, SNAPSHOT_FILE))).toEqual(before);
    expect(readdirSync(dir)).toEqual([SNAPSHOT_FILE]); // no temporary file, and the lock was released
    await expectRunIntact(dir);
  });

  it('short writes are continued until every byte is on disk', async () => {
    const dir = tempDir();
    const before = await storeWithRun(dir);
    const s = await openFileStore(dir, { io: shortWrites(1000) });
    await writeTooMuch(s, 20_000);
    await s.close();
    expect(readFileSync(join(dir, SNAPSHOT_FILE)).byteLength).toBeGreaterThan(before.byteLength + 20_000);
    const again = await openFileStore(dir, { readOnly: true });
    expect((await getTrajectory(again, 'too-big'))!.final_response).toHaveLength(20_000);
    await again.close();
  });

  it('a disk that says it wrote everything but kept less is caught by the size check before the rename', async () => {
    const dir = tempDir();
    const before = await storeWithRun(dir);
    const s: FileStore = await openFileStore(dir, { io: lyingDisk(1000) });
    await writeTooMuch(s, 5000);
    await expect(s.close()).rejects.toThrow(/no space left on device \(the file holds 1000 of the \d+ bytes written\)/);
    expect(readFileSync(join(dir, SNAPSHOT_FILE))).toEqual(before);
    await expectRunIntact(dir);
  });

  it('on a real 64 KiB file system (or the injected disk where none can be mounted) the old snapshot survives ENOSPC', async () => {
    const disk: SmallDisk | null = mountSmallDisk();
    if (disk) cleanups.push(() => disk.unmount());
    const dir = join(disk?.dir ?? tempDir(), 'store');
    const before = await storeWithRun(dir);
    // The real disk has 64 KiB; the injected one the same room beside the old snapshot.
    const io: SnapshotIo | undefined = disk ? undefined : fillingDisk(SMALL_DISK_BYTES - before.byteLength);
    const s = await openFileStore(dir, { io });
    await writeTooMuch(s, SMALL_DISK_BYTES);
    const error = await s.close().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).cause).toMatchObject({ code: 'ENOSPC' });
    expect((error as Error).message).toMatch(/free disk space \(the store needs about \d+\.\d KB free\)/);
    expect(readFileSync(join(dir, SNAPSHOT_FILE))).toEqual(before);
    expect(readdirSync(dir)).toEqual([SNAPSHOT_FILE]); // the torn temporary file is gone, its space free again
    await expectRunIntact(dir);
  });
});
