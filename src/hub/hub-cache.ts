/**
 * Where hub downloads are kept, and what makes a kept file count as the right one.
 *
 * A cache (disk in Node, Cache Storage in the browser) is a plain key → bytes store. hub.ts keys files
 * as `<owner>/<name>/<commit>/<file>` and keeps beside them, under its own prefixes, small JSON records:
 *   - `@meta/<key>`: the complete file's size, SHA-256 (when the hub gave one), ETag and URL. A file
 *     without its record is not cached; one whose bytes disagree with it is damaged.
 *   - `@partial/<key>`: the validator (strong ETag) and announced size of an interrupted download,
 *     without which its `.part` bytes are never resumed.
 *   - `@missing/<key>`: the file does not exist at that commit (a commit never changes, so a sharded
 *     repo's absent `model.safetensors` needs no request on the next, perhaps offline, load).
 *   - `@refs/<owner>/<name>/<revision>`: the commit a branch or tag was resolved to, once.
 * Prefixes start with `@`, which no hub id or revision contains, so they cannot meet a model's files.
 */
import { checkSafetensorsLayout, MAX_HEADER_BYTES } from './safetensors.ts';

/** Where downloaded files are kept: complete files by key, and the bytes so far of an interrupted one. */
export interface DownloadCache {
  get(key: string): Promise<Uint8Array | null>;
  put(key: string, bytes: Uint8Array): Promise<void>;
  getPartial(key: string): Promise<Uint8Array | null>;
  putPartial(key: string, bytes: Uint8Array): Promise<void>;
  deletePartial(key: string): Promise<void>;
  /** Adds bytes at the end of the partial file. Without it the whole partial file is put again. */
  appendPartial?(key: string, bytes: Uint8Array): Promise<void>;
  /** Turns a partial file of `size` bytes into the complete entry (a rename). Without it the bytes are put. */
  commitPartial?(key: string, size: number): Promise<void>;
  /** Removes a complete entry. Without it a damaged entry is made unreadable by dropping its record. */
  delete?(key: string): Promise<void>;
  /** Where an entry lives, for messages (a path on disk). */
  locate?(key: string): string;
}

export interface EntryRecord {
  size: number;
  /** Hex SHA-256 of the bytes, when the hub gave one (X-Linked-Etag of an LFS file). */
  sha256: string | null;
  etag: string | null;
  url: string;
}

export interface PartialRecord {
  /** The strong ETag the bytes came with: resumed only with If-Range on it. */
  etag: string;
  size: number | null;
  sha256: string | null;
  url: string;
}

const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

async function readRecord<T>(cache: DownloadCache, key: string): Promise<T | null> {
  const bytes = await cache.get(key);
  if (!bytes || bytes.length === 0) return null;
  try {
    return JSON.parse(new TextDecoder().decode(bytes)) as T;
  } catch {
    return null; // a torn record reads as none: the file is fetched again
  }
}

async function dropRecord(cache: DownloadCache, key: string): Promise<void> {
  if (cache.delete) await cache.delete(key);
  else await cache.put(key, new Uint8Array(0));
}

/** The records hub.ts keeps beside a cache's files. */
export const records = {
  entry: (c: DownloadCache, key: string) => readRecord<EntryRecord>(c, `@meta/${key}`),
  putEntry: (c: DownloadCache, key: string, r: EntryRecord) => c.put(`@meta/${key}`, json(r)),
  dropEntry: async (c: DownloadCache, key: string) => {
    await dropRecord(c, `@meta/${key}`);
    if (c.delete) await c.delete(key);
  },
  partial: (c: DownloadCache, key: string) => readRecord<PartialRecord>(c, `@partial/${key}`),
  putPartial: (c: DownloadCache, key: string, r: PartialRecord) => c.put(`@partial/${key}`, json(r)),
  dropPartial: async (c: DownloadCache, key: string) => {
    await c.deletePartial(key);
    await dropRecord(c, `@partial/${key}`);
  },
  missing: async (c: DownloadCache, key: string) =>
    (await readRecord<{ missing: boolean }>(c, `@missing/${key}`))?.missing === true,
  putMissing: (c: DownloadCache, key: string) => c.put(`@missing/${key}`, json({ missing: true })),
  /** The commit a revision resolved to; `{ commit: null }`: the server names no commit (files keyed by the revision). */
  ref: (c: DownloadCache, id: string, revision: string) =>
    readRecord<{ commit: string | null }>(c, `@refs/${id}/${revision}`),
  putRef: (c: DownloadCache, id: string, revision: string, commit: string | null) =>
    c.put(`@refs/${id}/${revision}`, json({ commit })),
};

/**
 * Why these bytes cannot be the file they are named after, or null: a JSON file that does not parse
 * (an HTML error page saved as config.json), a safetensors file whose header does not describe it exactly.
 */
export function contentProblem(file: string, bytes: Uint8Array): string | null {
  if (/\.json$/i.test(file)) {
    const text = new TextDecoder().decode(bytes);
    try {
      JSON.parse(text);
      return null;
    } catch (err) {
      const start = text.trimStart().slice(0, 40).replace(/\s+/g, ' ');
      return start.startsWith('<')
        ? `it is a web page ("${start}…"), not JSON`
        : `it is not valid JSON (${(err as Error).message})`;
    }
  }
  if (/\.safetensors$/i.test(file)) {
    try {
      checkSafetensorsLayout(bytes, file);
      return null;
    } catch (err) {
      return (err as Error).message.replace(/\.$/, '');
    }
  }
  return null;
}

/**
 * What a file's first bytes say about its whole length, for kinds that declare it: a safetensors file
 * is its 8-byte header length, the header, and the data up to the end of its last tensor. `null`: the
 * kind declares nothing; `{ need }`: bytes needed before it can say; `{ length }`: the file's length.
 * Throws when the bytes cannot start such a file (a header length over the reference reader's limit, a
 * header that is not a JSON object of tensors with offsets), so an endless or foreign body is refused at
 * its first bytes. The rest of the layout is checked on the whole file (`contentProblem`).
 */
export function declaredLength(file: string, prefix: Uint8Array): { need: number } | { length: number } | null {
  if (!/\.safetensors$/i.test(file)) return null;
  if (prefix.length < 8) return { need: 8 };
  const headerLength = new DataView(prefix.buffer, prefix.byteOffset, 8).getBigUint64(0, true);
  if (headerLength > BigInt(MAX_HEADER_BYTES)) {
    throw new Error(
      `its header length ${headerLength} is over ${MAX_HEADER_BYTES} bytes; it is not a safetensors file`,
    );
  }
  const dataStart = 8 + Number(headerLength);
  if (prefix.length < dataStart) return { need: dataStart };
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder().decode(prefix.subarray(8, dataStart)));
  } catch (err) {
    throw new Error(`its header is not valid JSON (${(err as Error).message})`, { cause: err });
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) {
    throw new Error('its header is not a JSON object of tensor entries');
  }
  let end = 0;
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const last = (entry as { data_offsets?: unknown } | null)?.data_offsets;
    const stop = Array.isArray(last) ? last[1] : undefined;
    if (!Number.isSafeInteger(stop) || (stop as number) < 0)
      throw new Error(`its header gives tensor "${name}" no usable data_offsets`);
    end = Math.max(end, stop as number);
  }
  return { length: dataStart + end };
}

/** Hex SHA-256 (WebCrypto: Node 20 and secure browser contexts; null where it is missing). */
export async function sha256Hex(bytes: Uint8Array): Promise<string | null> {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) return null;
  const digest = new Uint8Array(await subtle.digest('SHA-256', bytes as BufferSource));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Refuses a key that could leave the cache's folder (`..`, an absolute path, a backslash). */
function checkKey(key: string): string {
  if (key.startsWith('/') || key.includes('\\') || key.split('/').some((s) => s === '..' || s === '.' || s === '')) {
    throw new Error(`Refusing the cache key "${key}": it would leave the cache folder.`);
  }
  return key;
}

/**
 * Node: files under `dir/<key>`; a partial one beside it as `<key>.part`, grown by appending (an
 * interrupted download never rewrites what it already has) and renamed into place when complete.
 */
export function diskCache(dir: string): DownloadCache {
  const fs = async () =>
    (await import(/* @vite-ignore */ ['node:fs', 'promises'].join('/'))) as typeof import('node:fs/promises');
  const path = (key: string) => `${dir}/${checkKey(key)}`;
  const read = async (p: string) => {
    try {
      return new Uint8Array(await (await fs()).readFile(p));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  };
  const folder = async (p: string) => (await fs()).mkdir(p.slice(0, p.lastIndexOf('/')), { recursive: true });
  const write = async (p: string, bytes: Uint8Array) => {
    const f = await fs();
    await folder(p);
    // Write then rename, so a crash never leaves a truncated file that reads as complete.
    const tmp = `${p}.tmp-${process.pid}`;
    await f.writeFile(tmp, bytes);
    await f.rename(tmp, p);
  };
  return {
    get: (key) => read(path(key)),
    put: (key, bytes) => write(path(key), bytes),
    getPartial: (key) => read(`${path(key)}.part`),
    putPartial: (key, bytes) => write(`${path(key)}.part`, bytes),
    deletePartial: async (key) => (await fs()).rm(`${path(key)}.part`, { force: true }),
    async appendPartial(key, bytes) {
      const p = `${path(key)}.part`;
      await folder(p);
      await (await fs()).appendFile(p, bytes);
    },
    async commitPartial(key, size) {
      const f = await fs();
      const p = path(key);
      const { size: onDisk } = await f.stat(`${p}.part`);
      if (onDisk !== size)
        throw new Error(
          `${p}.part holds ${onDisk} bytes where ${size} were written; the disk lost some. Run again to download the file anew.`,
        );
      await f.rename(`${p}.part`, p);
    },
    delete: async (key) => (await fs()).rm(path(key), { force: true }),
    locate: (key) => path(key),
  };
}

/**
 * Browser: the Cache Storage bucket `spindle-models`. Cache Storage cannot append, so a partial file is
 * kept as numbered pieces (`…?part=0`, `…?part=1`, …), each one checkpoint's new bytes.
 */
export function browserCache(name = 'spindle-models'): DownloadCache {
  const url = (key: string, piece?: number) =>
    `https://spindle.cache/${checkKey(key)}${piece === undefined ? '' : `?part=${piece}`}`;
  const open = () => caches.open(name);
  const bytesOf = async (r: Response) => new Uint8Array(await r.arrayBuffer());
  const pieces = async (key: string): Promise<Uint8Array[]> => {
    const bucket = await open();
    const out: Uint8Array[] = [];
    for (let i = 0; ; i++) {
      const hit = await bucket.match(url(key, i));
      if (!hit) return out;
      out.push(await bytesOf(hit));
    }
  };
  const deletePieces = async (key: string) => {
    const bucket = await open();
    await bucket.delete(`https://spindle.cache/${key}?partial`); // the single-entry form of earlier versions
    for (let i = 0; await bucket.delete(url(key, i)); i++);
  };
  return {
    async get(key) {
      const hit = await (await open()).match(url(key));
      return hit ? bytesOf(hit) : null;
    },
    put: async (key, bytes) => (await open()).put(url(key), new Response(bytes as BlobPart)),
    async getPartial(key) {
      const all = await pieces(key);
      if (!all.length) return null;
      const out = new Uint8Array(all.reduce((n, p) => n + p.length, 0));
      let at = 0;
      for (const p of all) {
        out.set(p, at);
        at += p.length;
      }
      return out;
    },
    async putPartial(key, bytes) {
      await deletePieces(key);
      await (await open()).put(url(key, 0), new Response(bytes as BlobPart));
    },
    deletePartial: deletePieces,
    async appendPartial(key, bytes) {
      const bucket = await open();
      let i = 0;
      while (await bucket.match(url(key, i))) i++;
      await bucket.put(url(key, i), new Response(bytes as BlobPart));
    },
    delete: async (key) => void (await (await open()).delete(url(key))),
    locate: (key) => `Cache Storage "${name}" ${url(key)}`,
  };
}
