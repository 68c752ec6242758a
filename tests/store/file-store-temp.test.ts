/**
 * A SIGKILL during a save leaves `spindle.db.tmp-<pid>` behind; the next open removes it when that
 * process is dead, and leaves the temporary file of a live process (a save under way) alone.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openFileStore, SNAPSHOT_FILE } from '../../src/store/file-store.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('temporary snapshot files', () => {
  it('removes those of dead processes on open and keeps those of live ones', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'spindle-store-tmp-'));
    dirs.push(dir);
    const dead = spawnSync(process.execPath, ['-e', '']).pid!; // a process that has exited
    writeFileSync(join(dir, `${SNAPSHOT_FILE}.tmp-${dead}`), 'torn');
    writeFileSync(join(dir, `${SNAPSHOT_FILE}.tmp-${process.pid}`), 'in progress');
    writeFileSync(join(dir, 'notes.txt'), 'not ours');
    const store = await openFileStore(dir);
    await store.close();
    expect(readdirSync(dir).sort()).toEqual(['notes.txt', `${SNAPSHOT_FILE}.tmp-${process.pid}`]);
  });
});
