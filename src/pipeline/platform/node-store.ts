/**
 * The Node platform's store (CLI, benchmarks): the file-backed store in a folder, opened for one
 * operation and saved and closed whatever happens, and the run an operation is about (named, or the
 * newest). Commands name the folder; what a store is stays here.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { openFileStore, SNAPSHOT_FILE, type FileStore } from '../../store/file-store.ts';
import { saveFailureLead } from '../../store/snapshot-file.ts';
import { getRun, listRuns, loadLatestCheckpoint, StoreError, type RunRecord } from '../../store/index.ts';
import { runLabel } from '../../store/run-names.ts';

export { runLabel };

/** An open store in a folder (`path` is the folder). */
export type NodeStore = FileStore;

/** Whether `dir` holds a Spindle store yet. */
export function hasNodeStore(dir: string): boolean {
  return existsSync(join(dir, SNAPSHOT_FILE));
}

/** How a command uses the store: `create` it when missing; `readOnly` (list, show, export) reads it even while a writer holds it. */
export interface NodeStoreAccess {
  create?: boolean;
  readOnly?: boolean;
  /** How the sentence refusing a folder with no store ends (what makes one). */
  hint?: string;
}

/**
 * Opens the store in `dir`, runs `fn`, and saves and closes it whatever happens; a failed save is the
 * error (after `fn`'s own, if it failed too: then both are said). Opening to write takes the folder's lock,
 * so a second writer is refused by name; a `readOnly` open takes none and writes nothing.
 */
export async function withNodeStore<T>(
  dir: string,
  fn: (store: NodeStore) => Promise<T>,
  options: NodeStoreAccess = {},
): Promise<T> {
  if (!options.create && !hasNodeStore(dir)) {
    throw new Error(
      `There is no Spindle store in ${dir} (no ${SNAPSHOT_FILE})${options.hint ? `; ${options.hint}` : '.'}`,
    );
  }
  let store: FileStore;
  try {
    store = await openFileStore(dir, { readOnly: options.readOnly });
  } catch (e) {
    if (e instanceof StoreError) throw e; // says which store and why (another writer holds it, a full disk)
    throw new Error(`cannot open the store in ${dir}: ${(e as Error).message}`, { cause: e });
  }
  let result: T;
  try {
    result = await fn(store);
  } catch (e) {
    // The command's failure comes first; a save that failed as well is said after it, unless that failure was it.
    const saveError = await store.close().then(
      () => null,
      (c: unknown) => c as Error,
    );
    if (!saveError || String((e as Error)?.message).includes(saveFailureLead(store.path))) throw e;
    throw new Error(`${(e as Error).message}; and ${saveError.message}`, { cause: e });
  }
  await store.close();
  return result;
}

/** The run named `id`, or the newest run (with a checkpoint when `needCheckpoint`); throws naming recent runs. */
export async function findRun(store: NodeStore, id: string | undefined, needCheckpoint = false): Promise<RunRecord> {
  if (id) {
    const run = await getRun(store, id);
    if (!run) {
      const known = (await listRuns(store)).slice(0, 5).map(runLabel);
      throw new Error(
        `There is no run "${id}" in ${store.path}.${known.length ? ` Recent runs: ${known.join(', ')}.` : ''}`,
      );
    }
    return run;
  }
  for (const run of await listRuns(store)) {
    if (!needCheckpoint || (await loadLatestCheckpoint(store, run.id))) return run;
  }
  throw new Error(
    `The store ${store.path} has no run${needCheckpoint ? ' with a checkpoint' : ''} yet; train one first or pass --run ID.`,
  );
}

/** Labels run ids with their runs' names (`runLabel`), read once from `store`; an id it does not hold stays bare. */
export async function runLabeller(store: NodeStore): Promise<(id: string) => string> {
  const runs = new Map((await listRuns(store)).map((r) => [r.id, r]));
  return (id) => {
    const run = runs.get(id);
    return run ? runLabel(run) : id;
  };
}
