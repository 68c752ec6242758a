/**
 * The replay buffer's storage: entries indexed by [run_id, priority] so the highest-priority ones are
 * read without loading the rest. Sampling policy lives in src/train; this is only persistence.
 */
import { write, type Store } from './db.ts';
import type { ReplayRecord } from './records.ts';

export async function putReplay(store: Store, entries: ReplayRecord[]): Promise<void> {
  if (entries.length === 0) return;
  await write(store, ['replay'], `${entries.length} replay entries`, async (tx) => {
    for (const e of entries) await tx.objectStore('replay').put(e);
  });
}

/** Up to `limit` entries of a run, highest priority first. */
export async function topReplay(store: Store, runId: string, limit = Infinity): Promise<ReplayRecord[]> {
  const out: ReplayRecord[] = [];
  const index = store.db.transaction('replay').store.index('run_priority');
  for (let c = await index.openCursor(IDBKeyRange.bound([runId, -Infinity], [runId, Infinity]), 'prev'); c && out.length < limit; c = await c.continue()) {
    out.push(c.value);
  }
  return out;
}

export async function countReplay(store: Store, runId: string): Promise<number> {
  return store.db.countFromIndex('replay', 'run_id', runId);
}

export async function deleteReplay(store: Store, ids: string[]): Promise<void> {
  await write(store, ['replay'], `the deletion of ${ids.length} replay entries`, async (tx) => {
    for (const id of ids) await tx.objectStore('replay').delete(id);
  });
}

/** Drops the lowest-priority entries of a run until at most `capacity` remain; returns how many went. */
export async function trimReplay(store: Store, runId: string, capacity: number): Promise<number> {
  return write(store, ['replay'], `the trimming of run ${runId}'s replay buffer`, async (tx) => {
    const index = tx.objectStore('replay').index('run_priority');
    let excess = (await index.count(IDBKeyRange.bound([runId, -Infinity], [runId, Infinity]))) - capacity;
    let removed = 0;
    for (let c = await index.openKeyCursor(IDBKeyRange.bound([runId, -Infinity], [runId, Infinity])); c && excess > 0; c = await c.continue()) {
      await tx.objectStore('replay').delete(c.primaryKey);
      excess--;
      removed++;
    }
    return removed;
  });
}
