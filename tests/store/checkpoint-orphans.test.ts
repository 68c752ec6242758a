/**
 * A checkpoint staged by a process that died before committing it (a SIGKILL between the two
 * transactions) is dropped when the step is redone and committed, also at a step that
 * `training.checkpoint_every` keeps; the checkpoints committed before are kept as they were.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import {
  commitCheckpoint,
  getCheckpointHead,
  listCheckpoints,
  openStore,
  saveCheckpoint,
  stageCheckpoint,
} from '../../src/store/index.ts';

const bytes = (n: number) => new Float32Array([n]).buffer;
const input = (step: number) => ({ run_id: 'r', step, adapter: bytes(step), optimizer: null });

describe('a checkpoint staged and never committed', () => {
  it('is dropped when its step is redone, at a kept step too', async () => {
    const store = await openStore({ factory: new IDBFactory() });
    await saveCheckpoint(store, input(1), 1);
    const orphan = await stageCheckpoint(store, input(2)); // killed here
    const redone = await saveCheckpoint(store, input(2), 1);
    expect((await listCheckpoints(store, 'r')).map((c) => [c.step, c.id === orphan])).toEqual([
      [1, false],
      [2, false],
    ]);
    expect((await getCheckpointHead(store, 'r'))?.latest).toBe(redone);
    await saveCheckpoint(store, input(3), 1);
    expect((await listCheckpoints(store, 'r')).map((c) => c.step)).toEqual([1, 2, 3]);
  });

  it("before the run's first commit, every other record is such a leftover", async () => {
    const store = await openStore({ factory: new IDBFactory() });
    await stageCheckpoint(store, input(1)); // killed here
    const id = await stageCheckpoint(store, input(1));
    await commitCheckpoint(store, 'r', id, 1);
    expect((await listCheckpoints(store, 'r')).map((c) => c.id)).toEqual([id]);
  });

  it('a head whose records cannot be found keeps what checkpoint_every keeps', async () => {
    const store = await openStore({ factory: new IDBFactory() });
    for (const step of [1, 2, 3]) await saveCheckpoint(store, input(step), 1);
    const head = (await getCheckpointHead(store, 'r'))!;
    await store.db.delete('checkpoints', head.latest);
    await store.db.delete('checkpoints', head.previous!);
    await saveCheckpoint(store, input(4), 1);
    expect((await listCheckpoints(store, 'r')).map((c) => c.step)).toEqual([1, 4]);
  });
});
