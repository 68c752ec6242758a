/**
 * A full IndexedDB origin (the browser's store): the quota error comes at the commit, as browsers
 * report it (the transaction aborts with QuotaExceededError after every request succeeded). The write
 * is refused by name, what it wrote is rolled back, everything stored before is intact, and once there is
 * room again the same connection writes. fake-indexeddb is the store Node runs; its commit is made to
 * abort the way a full origin's does.
 */
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import {
  createRun,
  getTrajectory,
  listCheckpoints,
  loadLatestCheckpoint,
  openStore,
  putTrajectories,
  saveCheckpoint,
  StoreError,
  type Store,
} from '../../src/store/index.ts';
import { makeTrajectory } from './fixtures.ts';

interface FakeTransaction {
  mode: string;
  dispatchEvent(event: Event): boolean;
  _abort(errorName: string): void;
}

/** Until the returned function is called, every read-write commit aborts with QuotaExceededError. */
function originFull(): () => void {
  const proto = IDBTransaction.prototype as unknown as FakeTransaction;
  const dispatch = proto.dispatchEvent;
  proto.dispatchEvent = function (this: FakeTransaction, event: Event) {
    if (event.type !== 'complete' || this.mode !== 'readwrite') return dispatch.call(this, event);
    this._abort('QuotaExceededError'); // rolls the transaction's writes back and fires abort instead
    return true;
  };
  return () => {
    proto.dispatchEvent = dispatch;
  };
}

let restore: (() => void) | null = null;
const opened: Store[] = [];
afterEach(async () => {
  restore?.();
  restore = null;
  for (const s of opened.splice(0)) await s.close();
});

async function storeWithRun(): Promise<Store> {
  const store = await openStore({ factory: new IDBFactory() });
  opened.push(store);
  await createRun(store, DEFAULT_CONFIG, { id: 'run-a' });
  await putTrajectories(store, [makeTrajectory({ id: 'kept', group_id: 'q' })]);
  await saveCheckpoint(store, { run_id: 'run-a', step: 1, adapter: new Float32Array([1, 2]).buffer, optimizer: null });
  return store;
}

describe('a full IndexedDB origin', () => {
  it('refuses a batch of trajectories by name at the commit and keeps what was stored', async () => {
    const store = await storeWithRun();
    restore = originFull();
    const error = await putTrajectories(store, [
      makeTrajectory({ id: 'new-1', group_id: 'q' }),
      makeTrajectory({ id: 'new-2', group_id: 'q' }),
    ]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).code).toBe('quota');
    expect((error as Error).message).toBe(
      'Browser storage is full: could not save 2 trajectories. Nothing from this save was written (the transaction was ' +
        'rolled back) and everything stored before is intact. Free space by exporting and deleting old runs or trajectories, ' +
        'or allow persistent storage for this site so the browser grants more.',
    );
    restore();
    restore = null;
    expect(await getTrajectory(store, 'new-1')).toBeUndefined();
    expect(await getTrajectory(store, 'kept')).toBeTruthy();
    // Room again: the same connection writes.
    await putTrajectories(store, [makeTrajectory({ id: 'new-1', group_id: 'q' })]);
    expect(await getTrajectory(store, 'new-1')).toBeTruthy();
  });

  it('a checkpoint that does not fit leaves the previous one current and no half of it behind', async () => {
    const store = await storeWithRun();
    restore = originFull();
    const error = await saveCheckpoint(store, {
      run_id: 'run-a',
      step: 2,
      adapter: new Float32Array([3, 4]).buffer,
      optimizer: null,
    }).catch((e: unknown) => e);
    expect((error as StoreError).code).toBe('quota');
    expect((error as Error).message).toMatch(
      /^Browser storage is full: could not save the checkpoint of step 2 of run run-a\./,
    );
    restore();
    restore = null;
    const latest = await loadLatestCheckpoint(store, 'run-a');
    expect(latest?.step).toBe(1);
    expect(Array.from(new Float32Array(latest!.adapter))).toEqual([1, 2]);
    expect((await listCheckpoints(store, 'run-a')).map((c) => c.step)).toEqual([1]);
  });
});
