/**
 * A command whose store fills the disk fails: exit 1, the cause named (no space left on device, free disk
 * space), no summary claiming what was collected; the store on disk still decodes and holds the run it
 * had. On a real 64 KiB tmpfs where this machine can mount one, else on the file store's disk write made
 * to fill up (the same assertions).
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openFileStore, SNAPSHOT_FILE } from '../../src/store/file-store.ts';
import { countTrajectories, listRuns } from '../../src/store/index.ts';
import type { SnapshotIo } from '../../src/store/snapshot-file.ts';
import { fillingDisk, mountSmallDisk, SMALL_DISK_BYTES } from '../store/small-disk.ts';
import { cli, tempDir } from './helpers.ts';

/** Where no tmpfs can be mounted, the store's disk write goes through `fake.io`. */
const fake = vi.hoisted(() => ({ io: null as SnapshotIo | null }));
vi.mock('../../src/store/snapshot-file.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/store/snapshot-file.ts')>();
  return {
    ...real,
    diskIo: { write: (...args: Parameters<SnapshotIo['write']>) => (fake.io ?? real.diskIo).write(...args) },
  };
});

const cleanups: (() => void)[] = [];
afterEach(() => {
  fake.io = null;
  for (const c of cleanups.splice(0).reverse()) c();
});

describe('a full disk under a command', () => {
  it('collect exits 1 naming the full disk, and the store keeps the run it had', async () => {
    const disk = mountSmallDisk();
    if (disk) cleanups.push(() => disk.unmount());
    const work = tempDir();
    cleanups.push(() => rmSync(work, { recursive: true, force: true }));
    const store = join(disk?.dir ?? work, 'store');

    const first = await cli(
      work,
      'collect',
      '--policy',
      'expert',
      '--groups',
      '1',
      '--name',
      'first',
      '--store',
      store,
    );
    expect(first.code, first.err).toBe(0);
    if (!disk) fake.io = fillingDisk(SMALL_DISK_BYTES - readFileSync(join(store, SNAPSHOT_FILE)).byteLength);

    // About 9 KB a group: eight do not fit beside the first run in 64 KiB.
    const second = await cli(
      work,
      'collect',
      '--policy',
      'expert',
      '--groups',
      '8',
      '--name',
      'second',
      '--store',
      store,
    );
    expect(second.code).toBe(1);
    expect(second.err).toMatch(
      /^spindle: Could not save the Spindle store .*spindle\.db: .*no space left on device.*still holds its last complete save.*free disk space[^;]*$/m,
    );
    expect(second.out).not.toMatch(/trajectories in/);

    expect(readdirSync(store)).toEqual([SNAPSHOT_FILE]); // no torn temporary file, no lock left
    const s = await openFileStore(store, { readOnly: true });
    const kept = (await listRuns(s)).find((r) => r.name === 'first')!;
    expect(kept.status).toBe('completed');
    expect(await countTrajectories(s, { run_id: kept.id })).toBe(1);
    await s.close();
  });
});
