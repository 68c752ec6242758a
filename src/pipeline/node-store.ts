/**
 * The Node platform's store (CLI, benchmarks): the file-backed store in a folder, opened for one
 * operation and saved and closed whatever happens, and the run an operation is about (named, or the
 * newest). Moved here from the CLI (issue 29): commands name the folder; what a store is stays here.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { openFileStore, SNAPSHOT_FILE, type FileStore } from '../store/file-store.ts';
import { getRun, listRuns, loadLatestCheckpoint, type RunRecord } from '../store/index.ts';

/** An open store in a folder (`path` is the folder). */
export type NodeStore = FileStore;

/** Whether `dir` holds a Spindle store yet. */
export function hasNodeStore(dir: string): boolean {
  return existsSync(join(dir, SNAPSHOT_FILE));
}

/**
 * Opens the store in `dir` (creating it with `create`), runs `fn`, and saves and closes it whatever
 * happens. Without `create`, a folder with no store is refused, the sentence ending in `hint` (what makes one).
 */
export async function withNodeStore<T>(dir: string, fn: (store: NodeStore) => Promise<T>, options: { create?: boolean; hint?: string } = {}): Promise<T> {
  if (!options.create && !hasNodeStore(dir)) {
    throw new Error(`There is no Spindle store in ${dir} (no ${SNAPSHOT_FILE})${options.hint ? `; ${options.hint}` : '.'}`);
  }
  let store: FileStore;
  try {
    store = await openFileStore(dir);
  } catch (e) {
    throw new Error(`cannot open the store in ${dir}: ${(e as Error).message}`, { cause: e });
  }
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** The run named `id`, or the newest run (with a checkpoint when `needCheckpoint`); throws naming recent runs. */
export async function findRun(store: NodeStore, id: string | undefined, needCheckpoint = false): Promise<RunRecord> {
  if (id) {
    const run = await getRun(store, id);
    if (!run) {
      const known = (await listRuns(store)).slice(0, 5).map((r) => r.id);
      throw new Error(`There is no run "${id}" in ${store.path}.${known.length ? ` Recent runs: ${known.join(', ')}.` : ''}`);
    }
    return run;
  }
  for (const run of await listRuns(store)) {
    if (!needCheckpoint || (await loadLatestCheckpoint(store, run.id))) return run;
  }
  throw new Error(`The store ${store.path} has no run${needCheckpoint ? ' with a checkpoint' : ''} yet; train one first or pass --run ID.`);
}
