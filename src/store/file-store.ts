/**
 * The file-backed store for the Node CLI: the same `Store` API over an in-memory fake-indexeddb
 * database that is loaded from `<dir>/spindle.db` on open and saved back after every committed write.
 *
 * Saving writes the whole snapshot to a temporary file, every byte of it, checks its size, fsyncs it and
 * renames it over the old one (snapshot-file.ts), so a crash or a full disk leaves either the old or the
 * new file, never a torn one. A save that fails keeps the old file; the next write then throws the save's
 * error (the caller learns at once that nothing reaches the disk) and saving is tried again with every
 * write, and `flush`/`close` reject with it. Writes that commit while a save runs are coalesced into one
 * follow-up save. Cost: each save is O(database size); fine for the CLI's runs (tens of MB), not meant as a
 * server database. A temporary file whose process died mid-save (a SIGKILL) is removed on the next open;
 * one of a live process (a save under way) is left alone.
 *
 * One writer per folder: opening to write takes the folder's lock (store-lock.ts), and a second writer is
 * refused naming the first. `readOnly` opens take no lock: they read the last complete snapshot (a writer
 * may be saving newer ones meanwhile) and never save.
 */
import 'fake-indexeddb/auto';
import { mkdirSync, readFileSync, existsSync, rmSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { openStore, type Store } from './db.ts';
import { StoreError } from './errors.ts';
import { DB_VERSION } from './schema.ts';
import { decodeSnapshot, dumpDatabase, encodeSnapshot, loadIntoDatabase } from './snapshot.ts';
import { diskIo, saveFailureMessage, writeFileAtomically, type SnapshotIo } from './snapshot-file.ts';
import { lockStoreFolder, processAlive } from './store-lock.ts';

export interface FileStore extends Store {
  readonly path: string;
  /** Resolves when everything committed so far is on disk; rejects with the last save error. */
  flush(): Promise<void>;
}

export const SNAPSHOT_FILE = 'spindle.db';
const TEMP_FILE = /^spindle\.db\.tmp-(\d+)$/;

/** Removes the temporary snapshots that processes killed mid-save left behind (`spindle.db.tmp-<pid>`). */
function removeStaleTemps(dir: string): void {
  for (const name of readdirSync(dir)) {
    const pid = TEMP_FILE.exec(name)?.[1];
    if (pid && !processAlive(Number(pid))) rmSync(join(dir, name), { force: true });
  }
}

export interface FileStoreOptions {
  /** Read the snapshot without taking the folder's lock; nothing is ever saved. */
  readOnly?: boolean;
  /** The disk write (tests make it short); the real one by default. */
  io?: SnapshotIo;
}

export async function openFileStore(dir: string, options: FileStoreOptions = {}): Promise<FileStore> {
  const path = join(dir, SNAPSHOT_FILE);
  // Never saved: what a reader writes (a run whose process died is marked interrupted as it is read) stays in its memory.
  if (options.readOnly) return openSnapshot(path, () => {});
  mkdirSync(dir, { recursive: true });
  const unlock = lockStoreFolder(dir);
  try {
    removeStaleTemps(dir);
    return await openWritable(path, options.io ?? diskIo, unlock);
  } catch (e) {
    unlock();
    throw e;
  }
}

/** The database loaded from the snapshot at `path` (empty when there is none), `afterWrite` called after each committed write. */
async function openSnapshot(path: string, afterWrite: () => void, extra: Partial<FileStore> = {}): Promise<FileStore> {
  const factory = new IDBFactory();
  if (existsSync(path)) {
    const data = decodeSnapshot(readFileSync(path), path);
    if (data.db_version > DB_VERSION) {
      throw new Error(
        `${path} was written by a newer Spindle (database v${data.db_version}; this one knows v${DB_VERSION}). Update Spindle.`,
      );
    }
    // Load at the snapshot's own version, then let the normal open run the upgrade steps.
    const old = await openStore({ factory, version: data.db_version });
    await loadIntoDatabase(old.db, data);
    await old.close();
  }
  return Object.assign(await openStore({ factory, afterWrite }), { path, async flush() {} }, extra);
}

async function openWritable(path: string, io: SnapshotIo, unlock: () => void): Promise<FileStore> {
  let saving: Promise<void> | null = null;
  let dirty = false;
  let lastError: StoreError | null = null;

  const saveOnce = async () => {
    const bytes = encodeSnapshot(await dumpDatabase(store.db));
    try {
      writeFileAtomically(path, `${path}.tmp-${process.pid}`, bytes, io);
    } catch (e) {
      throw new StoreError('io', saveFailureMessage(path, e, bytes.byteLength), { cause: e });
    }
  };
  const saveLoop = async () => {
    while (dirty) {
      dirty = false;
      try {
        await saveOnce();
        lastError = null;
      } catch (e) {
        lastError = e instanceof StoreError ? e : new StoreError('io', saveFailureMessage(path, e, 0), { cause: e });
      }
    }
    saving = null;
  };
  const afterWrite = () => {
    dirty = true;
    saving ??= saveLoop();
    if (lastError) throw lastError;
  };
  const store = await openSnapshot(path, afterWrite, {
    async flush() {
      while (saving) await saving;
      if (lastError) throw lastError;
    },
  });
  const closeDb = store.close;
  store.close = async () => {
    try {
      await store.flush();
    } finally {
      await closeDb();
      unlock();
    }
  };
  return store;
}
