import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openFileStore, SNAPSHOT_FILE } from '../../src/store/file-store.ts';
import {
  openStore,
  putTrajectory,
  getTrajectory,
  saveCheckpoint,
  loadLatestCheckpoint,
  appendMetrics,
  listMetrics,
  createRun,
  getGroup,
} from '../../src/store/index.ts';
import { dumpDatabase, encodeSnapshot } from '../../src/store/snapshot.ts';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import { makeTrajectory } from './fixtures.ts';

const dirs: string[] = [];
function tempDir() {
  const d = mkdtempSync(join(tmpdir(), 'spindle-store-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('the file-backed store (Node CLI)', () => {
  it('saves after writes and reads everything back after reopening, binary and NaN included', async () => {
    const dir = tempDir();
    const t = makeTrajectory({ group_id: 'fg' });
    const a = await openFileStore(dir);
    await createRun(a, DEFAULT_CONFIG, { id: 'run-a' });
    await putTrajectory(a, t);
    await appendMetrics(a, { run_id: 'run-a', step: 0, time: 1, metrics: { reward: 0.5, kl: NaN, big: Infinity } });
    await saveCheckpoint(a, {
      run_id: 'run-a',
      step: 1,
      adapter: new Float32Array([1.5, -2]).buffer,
      optimizer: new Uint8Array([7, 8, 9]).buffer,
      meta: { w: new Float32Array([3]) },
    });
    await a.close();
    expect(readdirSync(dir)).toEqual([SNAPSHOT_FILE]); // no temporary file left behind

    const b = await openFileStore(dir);
    expect(await getTrajectory(b, t.id)).toEqual(t);
    expect((await getGroup(b, 'fg'))?.trajectory_ids).toEqual([t.id]);
    const [m] = await listMetrics(b, 'run-a');
    expect(m.metrics.reward).toBe(0.5);
    expect(Number.isNaN(m.metrics.kl)).toBe(true);
    expect(m.metrics.big).toBe(Infinity);
    const ckpt = await loadLatestCheckpoint(b, 'run-a');
    expect(Array.from(new Float32Array(ckpt!.adapter))).toEqual([1.5, -2]);
    expect(Array.from(new Uint8Array(ckpt!.optimizer!))).toEqual([7, 8, 9]);
    expect(ckpt!.meta.w).toBeInstanceOf(Float32Array);
    await b.close();
  });

  it('coalesces a burst of writes and has them all on disk after flush', async () => {
    const dir = tempDir();
    const s = await openFileStore(dir);
    const ts = Array.from({ length: 30 }, () => makeTrajectory());
    await Promise.all(ts.map((t) => putTrajectory(s, t)));
    await s.flush();
    await s.close();
    const again = await openFileStore(dir);
    expect((await Promise.all(ts.map((t) => getTrajectory(again, t.id)))).every(Boolean)).toBe(true);
    await again.close();
  });

  it('upgrades a snapshot written at schema v1', async () => {
    const dir = tempDir();
    const v1 = await openStore({ factory: new IDBFactory(), version: 1 });
    const { split: _s, ...old } = makeTrajectory({ id: 'v1-t' });
    await v1.db.put('trajectories', old as never);
    writeFileSync(join(dir, SNAPSHOT_FILE), encodeSnapshot(await dumpDatabase(v1.db)));
    await v1.close();
    const s = await openFileStore(dir);
    expect(await s.db.get('trajectories', 'v1-t')).toMatchObject({ n_steps: 1, split: 'train' });
    await s.close();
  });

  it('refuses a truncated snapshot with the file name and leaves the file as it was', async () => {
    const dir = tempDir();
    const s = await openFileStore(dir);
    await putTrajectory(s, makeTrajectory());
    await s.close();
    const path = join(dir, SNAPSHOT_FILE);
    const full = readFileSync(path);
    writeFileSync(path, full.subarray(0, full.byteLength - 10));
    await expect(openFileStore(dir)).rejects.toThrow(
      new RegExp(`${SNAPSHOT_FILE}: not a readable Spindle database snapshot`),
    );
    expect(readFileSync(path).byteLength).toBe(full.byteLength - 10);
  });
});
