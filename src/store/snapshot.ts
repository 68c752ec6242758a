/**
 * A whole database as one byte string, for the file-backed store. Layout:
 *
 *   "SPNDLDB1"  8 bytes magic
 *   u32 LE      length N of the JSON header
 *   N bytes     UTF-8 JSON { db_version, stores: { name: [records] }, chunks: [[offset, length, type]] }
 *   …           binary chunks, each starting at an 8-byte-aligned offset from the end of the JSON
 *
 * In the JSON, an ArrayBuffer or typed array is `{"__bin__": i}` (chunk i) and a non-finite number is
 * `{"__num__": "NaN" | "Infinity" | "-Infinity"}`, so checkpoints and NaN metrics survive.
 */
import type { StoreNames } from 'idb';
import type { SpindleDB, SpindleSchema } from './schema.ts';
import { storesAtVersion } from './schema.ts';

const MAGIC = 'SPNDLDB1';
type ChunkType =
  | 'ArrayBuffer'
  | 'Uint8Array'
  | 'Int8Array'
  | 'Uint16Array'
  | 'Int16Array'
  | 'Uint32Array'
  | 'Int32Array'
  | 'Float32Array'
  | 'Float64Array';
const VIEWS: Record<Exclude<ChunkType, 'ArrayBuffer'>, new (b: ArrayBuffer) => ArrayBufferView> = {
  Uint8Array,
  Int8Array,
  Uint16Array,
  Int16Array,
  Uint32Array,
  Int32Array,
  Float32Array,
  Float64Array,
};

export interface SnapshotData {
  db_version: number;
  stores: Record<string, unknown[]>;
}

export async function dumpDatabase(db: SpindleDB): Promise<SnapshotData> {
  const names = [...db.objectStoreNames] as StoreNames<SpindleSchema>[];
  const tx = db.transaction(names);
  const stores: Record<string, unknown[]> = {};
  for (const name of names) stores[name] = await tx.objectStore(name).getAll();
  await tx.done;
  return { db_version: db.version, stores };
}

export function encodeSnapshot(data: SnapshotData): Uint8Array {
  const chunks: Uint8Array[] = [];
  const table: [number, number, ChunkType][] = [];
  let offset = 0;
  const json = JSON.stringify(data, function (this: unknown, _key, value: unknown) {
    if (typeof value === 'number' && !Number.isFinite(value)) return { __num__: String(value) };
    if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) {
      const type = (value instanceof ArrayBuffer ? 'ArrayBuffer' : value.constructor.name) as ChunkType;
      if (type !== 'ArrayBuffer' && !(type in VIEWS)) throw new Error(`snapshot: cannot store a ${type}`);
      const bytes =
        value instanceof ArrayBuffer
          ? new Uint8Array(value)
          : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
      table.push([offset, bytes.byteLength, type]);
      chunks.push(bytes);
      offset += Math.ceil(bytes.byteLength / 8) * 8;
      return { __bin__: table.length - 1 };
    }
    return value;
  });
  // The table is only complete after stringify, so it travels in a second small JSON.
  const header = new TextEncoder().encode(JSON.stringify({ chunks: table }) + '\n' + json);
  const out = new Uint8Array(8 + 4 + header.byteLength + offset);
  out.set(new TextEncoder().encode(MAGIC), 0);
  new DataView(out.buffer).setUint32(8, header.byteLength, true);
  out.set(header, 12);
  const base = 12 + header.byteLength;
  table.forEach(([o], i) => out.set(chunks[i], base + o));
  return out;
}

export function decodeSnapshot(input: Uint8Array, fileName = 'snapshot'): SnapshotData {
  // A Node Buffer's slice() is a view into a shared pool; a plain Uint8Array's slice() copies.
  const bytes = new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  const fail = (problem: string) =>
    new Error(
      `${fileName}: not a readable Spindle database snapshot (${problem}). Restore it from a backup or move it away to start empty.`,
    );
  if (bytes.byteLength < 12 || new TextDecoder().decode(bytes.subarray(0, 8)) !== MAGIC)
    throw fail('wrong magic bytes');
  const n = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(8, true);
  if (12 + n > bytes.byteLength) throw fail(`header says ${n} bytes of JSON but the file has ${bytes.byteLength - 12}`);
  const text = new TextDecoder().decode(bytes.subarray(12, 12 + n));
  const split = text.indexOf('\n');
  let table: [number, number, ChunkType][];
  let body: unknown;
  try {
    table = (JSON.parse(text.slice(0, split)) as { chunks: [number, number, ChunkType][] }).chunks;
    const base = 12 + n;
    body = JSON.parse(text.slice(split + 1), (_key, value: unknown) => {
      if (value && typeof value === 'object' && '__num__' in value)
        return Number((value as { __num__: string }).__num__);
      if (value && typeof value === 'object' && '__bin__' in value) {
        const [o, len, type] = table[(value as { __bin__: number }).__bin__];
        if (base + o + len > bytes.byteLength)
          throw new Error(`binary chunk at ${o} (${len} bytes) runs past the end of the file`);
        const copy = bytes.slice(base + o, base + o + len).buffer;
        return type === 'ArrayBuffer' ? copy : new VIEWS[type](copy);
      }
      return value;
    });
  } catch (e) {
    throw fail((e as Error).message);
  }
  const data = body as SnapshotData;
  if (typeof data?.db_version !== 'number' || typeof data.stores !== 'object')
    throw fail('missing db_version or stores');
  return data;
}

/** Writes a snapshot's records into an empty database opened at `data.db_version`. */
export async function loadIntoDatabase(db: SpindleDB, data: SnapshotData): Promise<void> {
  const names = storesAtVersion(data.db_version).filter((n) => data.stores[n]?.length);
  if (names.length === 0) return;
  const tx = db.transaction(names, 'readwrite');
  for (const name of names) {
    const store = tx.objectStore(name);
    // Queue every put and wait once: the transaction fails as a whole if any put does.
    for (const record of data.stores[name]) store.put(record as never).catch(() => {});
  }
  await tx.done;
}
