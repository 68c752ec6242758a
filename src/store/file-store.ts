/**
 * The file-backed store for the Node CLI: the same `Store` API over an in-memory fake-indexeddb
 * database that is loaded from `<dir>/spindle.db` on open and saved back after every committed write.
 *
 * Saving writes the whole snapshot to a temporary file, fsyncs it and renames it over the old one,
 * so a crash leaves either the old or the new file, never a torn one. Writes that commit while a save
 * runs are coalesced into one follow-up save. Cost: each save is O(database size); fine for the CLI's
 * runs (tens of MB), not meant as a server database. A temporary file whose process died mid-save
 * (a SIGKILL) is removed on the next open; one of a live process (a save under way) is left alone.
 */
import 'fake-indexeddb/auto';
import { mkdirSync, openSync, fsyncSync, closeSync, writeSync, renameSync, readFileSync, existsSync, rmSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { openStore, type Store } from './db.ts';
import { DB_VERSION } from './schema.ts';
import { decodeSnapshot, dumpDatabase, encodeSnapshot, loadIntoDatabase } from './snapshot.ts';

export interface FileStore extends Store {
  readonly path: string;
  /** Resolves when everything committed so far is on disk; rejects with the last save error. */
  flush(): Promise<void>;
}

export const SNAPSHOT_FILE = 'spindle.db';
const TEMP_FILE = /^spindle\.db\.tmp-(\d+)$/;

/** Whether a process with this id exists (EPERM: it does, under another user). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes the temporary snapshots that processes killed mid-save left behind (`spindle.db.tmp-<pid>`). */
function removeStaleTemps(dir: string): void {
  for (const name of readdirSync(dir)) {
    const pid = TEMP_FILE.exec(name)?.[1];
    if (pid && !processAlive(Number(pid))) rmSync(join(dir, name), { force: true });
  }
}

export async function openFileStore(dir: string): Promise<FileStore> {
  mkdirSync(dir, { recursive: true });
  removeStaleTemps(dir);
  const path = join(dir, SNAPSHOT_FILE);
  const factory = new IDBFactory();
  if (existsSync(path)) {
    const data = decodeSnapshot(readFileSync(path), path);
    if (data.db_version > DB_VERSION) {
      throw new Error(`${path} was written by a newer Spindle (database v${data.db_version}; this one knows v${DB_VERSION}). Update Spindle.`);
    }
    // Load at the snapshot's own version, then let the normal open run the upgrade steps.
    const old = await openStore({ factory, version: data.db_version });
    await loadIntoDatabase(old.db, data);
    await old.close();
  }

  let saving: Promise<void> | null = null;
  let dirty = false;
  let lastError: Error | null = null;

  const saveOnce = async () => {
    const bytes = encodeSnapshot(await dumpDatabase(store.db));
    const tmp = `${path}.tmp-${process.pid}`;
    const fd = openSync(tmp, 'w');
    try {
      writeSync(fd, bytes);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  };
  const saveLoop = async () => {
    while (dirty) {
      dirty = false;
      try {
        await saveOnce();
        lastError = null;
      } catch (e) {
        lastError = new Error(`Could not save the Spindle store to ${path}: ${(e as Error).message}. The data is still in memory; free disk space and it is saved with the next write.`, { cause: e });
        rmSync(`${path}.tmp-${process.pid}`, { force: true });
      }
    }
    saving = null;
  };
  const schedule = () => {
    dirty = true;
    saving ??= saveLoop();
  };

  const store: FileStore & { db: Store['db'] } = Object.assign(
    await openStore({ factory, afterWrite: schedule }),
    {
      path,
      async flush() {
        while (saving) await saving;
        if (lastError) throw lastError;
      },
    },
  );
  const closeDb = store.close;
  store.close = async () => {
    await store.flush();
    await closeDb();
  };
  return store;
}
