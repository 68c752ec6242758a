/**
 * Opening the `spindle` database and the one write path every store module uses. A `Store` is the
 * open database plus a hook the file-backed store (Node CLI) uses to save after each committed write.
 * In the browser the factory is `indexedDB`; in Node it is a fake-indexeddb `IDBFactory`.
 */
import { wrap, type StoreNames } from 'idb';
import { DB_NAME, DB_VERSION, upgrade, type SpindleDB, type SpindleSchema, type UpgradeTx } from './schema.ts';
import { blockedError, StoreError, versionError, writeError } from './errors.ts';
import type { IDBPTransaction } from 'idb';

export interface Store {
  readonly db: SpindleDB;
  /** Called after every committed write transaction; throws when what was committed cannot be kept (file store: disk full). */
  afterWrite(): void;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** `indexedDB` in the browser (the default); a fake-indexeddb `IDBFactory` in Node. */
  factory?: IDBFactory;
  name?: string;
  /** Open at an older version (tests of the upgrade path). */
  version?: number;
  /**
   * Another tab holds an older version open and blocks the upgrade. With this callback the open keeps
   * waiting (show the message; it continues when the other tab closes). Without it, the open fails
   * with that StoreError.
   */
  onBlocked?: (error: StoreError) => void;
  /** A newer version wants this connection gone (another tab upgraded). It is closed; tell the user to reload. */
  onVersionChange?: () => void;
  afterWrite?: () => void;
}

export async function openStore(options: OpenOptions = {}): Promise<Store> {
  const factory = options.factory ?? globalThis.indexedDB;
  if (!factory)
    throw new StoreError(
      'io',
      'IndexedDB is not available here (private browsing in some browsers disables it): Spindle cannot store runs.',
    );
  const version = options.version ?? DB_VERSION;
  const db = await openDatabase(factory, options.name ?? DB_NAME, version, options.onBlocked);
  db.addEventListener('versionchange', () => {
    db.close();
    options.onVersionChange?.();
  });
  const afterWrite = options.afterWrite ?? (() => {});
  return {
    db,
    afterWrite: () => afterWrite(),
    async close() {
      db.close();
    },
  };
}

function openDatabase(
  factory: IDBFactory,
  name: string,
  version: number,
  onBlocked?: (e: StoreError) => void,
): Promise<SpindleDB> {
  return new Promise((resolve, reject) => {
    let request: IDBOpenDBRequest;
    try {
      request = factory.open(name, version);
    } catch (e) {
      reject(new StoreError('io', `Could not open the Spindle database: ${(e as Error).message}`, { cause: e }));
      return;
    }
    let gaveUp = false;
    request.onupgradeneeded = (event) => {
      // The caller already got the "blocked" error: do not upgrade behind its back once the other tab closes.
      if (gaveUp) {
        request.transaction?.abort();
        return;
      }
      const db = wrap(request.result) as unknown as SpindleDB;
      const tx = wrap(request.transaction!) as unknown as UpgradeTx;
      tx.done.catch(() => {}); // a failed upgrade is reported through the open request below
      upgrade(db, event.oldVersion, event.newVersion ?? version, tx).catch((e) => {
        // Aborting the upgrade leaves the database at its old version with its old data.
        try {
          request.transaction?.abort();
        } catch {
          /* already finished */
        }
        reject(
          new StoreError(
            'io',
            `Upgrading the Spindle database to v${version} failed and was rolled back: ${(e as Error).message}`,
            { cause: e },
          ),
        );
      });
    };
    request.onblocked = (event) => {
      const error = blockedError(event.oldVersion, event.newVersion);
      if (onBlocked) onBlocked(error);
      else {
        gaveUp = true;
        reject(error);
      }
    };
    request.onsuccess = () => {
      const raw = request.result;
      if (gaveUp) {
        raw.close();
        return;
      } // the caller was told it failed; do not leak the connection
      resolve(wrap(raw) as unknown as SpindleDB);
    };
    request.onerror = () => {
      const e = request.error;
      if (gaveUp) return;
      if (e?.name === 'VersionError') reject(versionError(e, version));
      else if (e?.name === 'AbortError')
        reject(
          new StoreError(
            'io',
            `Upgrading the Spindle database to v${version} was aborted; the stored data is unchanged.`,
            { cause: e },
          ),
        );
      else reject(writeError(e, 'the database'));
    };
  });
}

type Tx<N extends StoreNames<SpindleSchema>> = IDBPTransaction<SpindleSchema, N[], 'readwrite'>;

/**
 * Runs `body` in one readwrite transaction over `stores`: all of it commits or none of it does.
 * `body` may only await requests of `tx` (anything else lets IndexedDB commit early). Errors become
 * StoreErrors naming `what`; quota errors say that nothing was written.
 */
export async function write<N extends StoreNames<SpindleSchema>, T>(
  store: Store,
  stores: N[],
  what: string,
  body: (tx: Tx<N>) => Promise<T>,
): Promise<T> {
  let tx: Tx<N>;
  try {
    tx = store.db.transaction(stores, 'readwrite');
  } catch (e) {
    throw writeError(e, what);
  }
  let result: T;
  try {
    result = await body(tx);
    await tx.done;
  } catch (e) {
    // A quota failure may surface as the request's error or, later, as the transaction's (at commit).
    const cause = tx.error ?? e;
    try {
      tx.abort();
    } catch {
      /* already aborted or committed */
    }
    await tx.done.catch(() => {});
    throw writeError(cause, what);
  }
  // Committed. The file store throws here when its snapshot cannot reach the disk: its own message says so.
  store.afterWrite();
  return result;
}

/** A readonly transaction over `stores`. */
export function read<N extends StoreNames<SpindleSchema>>(store: Store, stores: N[]) {
  return store.db.transaction(stores, 'readonly');
}
