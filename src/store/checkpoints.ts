/**
 * Checkpoints, written so that a crash at any moment leaves the previous one usable:
 *   1. the new checkpoint goes in under a fresh key, in its own transaction (all or nothing);
 *   2. a second transaction flips the run's head (`latest`, `previous`) to it and deletes checkpoints
 *      that are neither, including ones a crash left behind between 1 and 2 (also at a kept step); it
 *      commits after every metrics and markers write issued before it.
 * Until 2 commits, readers still get the old head, whose record was never touched.
 */
import { write, type Store } from './db.ts';
import type { CheckpointHead, CheckpointRecord } from './records.ts';
import { newId } from './runs.ts';

export interface CheckpointInput {
  run_id: string;
  step: number;
  adapter: ArrayBuffer;
  optimizer: ArrayBuffer | null;
  meta?: Record<string, unknown>;
}

/** Phase 1: the checkpoint record under a new key. Not yet visible through `loadLatestCheckpoint`. */
export async function stageCheckpoint(store: Store, input: CheckpointInput): Promise<string> {
  const record: CheckpointRecord = {
    id: newId(`ckpt-${input.run_id}-${input.step}`),
    run_id: input.run_id,
    step: input.step,
    created_at: Date.now(),
    adapter: input.adapter,
    optimizer: input.optimizer,
    meta: input.meta ?? {},
  };
  await write(store, ['checkpoints'], `the checkpoint of step ${input.step} of run ${input.run_id}`, async (tx) => {
    await tx.objectStore('checkpoints').add(record);
  });
  return record.id;
}

/**
 * Phase 2: make `id` the run's latest checkpoint, keep the one before as `previous`, drop the rest,
 * except those of every `keepEvery`-th step (training.checkpoint_every) when given.
 */
export async function commitCheckpoint(
  store: Store,
  runId: string,
  id: string,
  keepEvery = 0,
): Promise<CheckpointHead> {
  // The scope takes the metrics and markers stores too, though nothing here writes them: IndexedDB runs
  // read-write transactions over overlapping stores in the order they were created, so the head moves only
  // after the metrics and markers of the update it checkpoints, which the trainer sends off (unawaited)
  // before the checkpoint is taken. Without that a slow metrics write could commit after the head, and a
  // crash between the two lost the update's metrics for good (a resumed run does not redo the update).
  return write(
    store,
    ['checkpoints', 'checkpoint_heads', 'metrics', 'markers'],
    `the checkpoint pointer of run ${runId}`,
    async (tx) => {
      const heads = tx.objectStore('checkpoint_heads');
      const old = await heads.get(runId);
      if (!(await tx.objectStore('checkpoints').getKey(id))) throw new Error(`checkpoint ${id} is not stored`);
      const head: CheckpointHead = {
        run_id: runId,
        latest: id,
        previous: old && old.latest !== id ? old.latest : (old?.previous ?? null),
      };
      await heads.put(head);
      const keep = new Set([head.latest, head.previous]);
      const index = tx.objectStore('checkpoints').index('run_step');
      const stored: { id: string; step: number }[] = [];
      for (
        let c = await index.openKeyCursor(IDBKeyRange.bound([runId, -Infinity], [runId, Infinity]));
        c;
        c = await c.continue()
      ) {
        stored.push({ id: c.primaryKey, step: (c.key as [string, number])[1] });
      }
      // Steps only grow, so a checkpoint later than the old head was never committed: a process died between
      // staging and committing it. It goes even at a keepEvery-th step (the step was redone; `id` is its checkpoint).
      const stepOf = (id: string | null | undefined) => stored.find((c) => c.id === id)?.step;
      const committedUpTo = old ? (stepOf(old.latest) ?? stepOf(old.previous) ?? Infinity) : -Infinity;
      for (const { id: key, step } of stored) {
        if (keep.has(key) || (keepEvery > 0 && step > 0 && step % keepEvery === 0 && step <= committedUpTo)) continue;
        await tx.objectStore('checkpoints').delete(key);
      }
      return head;
    },
  );
}

/** Saves a checkpoint crash-safely (stage, then commit); `keepEvery` as for commitCheckpoint. */
export async function saveCheckpoint(store: Store, input: CheckpointInput, keepEvery = 0): Promise<string> {
  const id = await stageCheckpoint(store, input);
  await commitCheckpoint(store, input.run_id, id, keepEvery);
  return id;
}

/** The run's current checkpoint; falls back to `previous` if the latest record is unreadable. */
export async function loadLatestCheckpoint(store: Store, runId: string): Promise<CheckpointRecord | undefined> {
  const tx = store.db.transaction(['checkpoint_heads', 'checkpoints']);
  const head = await tx.objectStore('checkpoint_heads').get(runId);
  if (!head) return undefined;
  return (
    (await tx.objectStore('checkpoints').get(head.latest)) ??
    (head.previous ? await tx.objectStore('checkpoints').get(head.previous) : undefined)
  );
}

export async function loadCheckpoint(store: Store, id: string): Promise<CheckpointRecord | undefined> {
  return store.db.get('checkpoints', id);
}

export async function getCheckpointHead(store: Store, runId: string): Promise<CheckpointHead | undefined> {
  return store.db.get('checkpoint_heads', runId);
}

/** The run's stored checkpoints without their payloads (`bytes`: what the payloads take), by step. */
export async function listCheckpoints(
  store: Store,
  runId: string,
): Promise<(Omit<CheckpointRecord, 'adapter' | 'optimizer'> & { bytes: number })[]> {
  const records = await store.db.getAllFromIndex(
    'checkpoints',
    'run_step',
    IDBKeyRange.bound([runId, -Infinity], [runId, Infinity]),
  );
  return records.map(({ adapter, optimizer, ...meta }) => ({
    ...meta,
    bytes: adapter.byteLength + (optimizer?.byteLength ?? 0),
  }));
}
