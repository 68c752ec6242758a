/**
 * Models from the Hugging Face hub by id (`hf:HuggingFaceTB/SmolLM2-135M-Instruct`, `hf:Qwen/Qwen3-0.6B@<rev>`)
 * or by URL (`https://huggingface.co/<id>/resolve/<rev>/`), as a FileSource that:
 *   - reports progress per file (bytes loaded / total) while the body streams in;
 *   - caches every complete file (on disk in Node, Cache Storage in the browser) under id + revision,
 *     so a second load reads no network;
 *   - resumes an interrupted download with an HTTP Range request from the bytes already kept (the
 *     cache keeps partial files too), instead of starting the shard again.
 * The endpoint is an option so tests serve files from 127.0.0.1; nothing here reaches the internet by itself.
 */
import type { FileSource } from './hf.ts';

export interface HubRef {
  id: string;
  revision: string;
}

export const HUB_ENDPOINT = 'https://huggingface.co';
const ID = /^[\w.-]+\/[\w.-]+$/;

/** `hf:<owner>/<name>[@<revision>]` or a huggingface.co model URL; null for anything else (a folder, another URL). */
export function parseHubRef(text: string, endpoint = HUB_ENDPOINT): HubRef | null {
  if (text.startsWith('hf:')) {
    const [id, revision = 'main'] = text.slice(3).split('@');
    if (!ID.test(id) || !/^[\w./-]+$/.test(revision)) throw new Error(`"${text}" is not a hub model id; expected hf:<owner>/<name> or hf:<owner>/<name>@<revision>.`);
    return { id, revision };
  }
  const base = endpoint.replace(/\/$/, '');
  if (!text.startsWith(base + '/')) return null;
  const m = /^([\w.-]+\/[\w.-]+)(?:\/(?:resolve|tree)\/([^/]+))?\/?$/.exec(text.slice(base.length + 1));
  return m ? { id: m[1], revision: m[2] ?? 'main' } : null;
}

/** The shipped policy's folder, which transformers loads (config.json, model.safetensors, tokenizer.json). */
const SHIPPED_BASE = { 'spindle-base': 'models/spindle-base' } as Record<string, string>;

/**
 * What an adapter's `base_model_name_or_path` and `revision` say for a run's `model.base_model`, so
 * `PeftModel.from_pretrained` / `AutoPeftModelForCausalLM` find the real base: the hub id and its
 * revision for a hub model, the shipped folder's path for spindle-base, anything else as it is.
 */
export function transformersBase(baseModel: string): { base_model_name_or_path: string; revision: string | null } {
  const ref = parseHubRef(baseModel);
  if (ref) return { base_model_name_or_path: ref.id, revision: ref.revision === 'main' ? null : ref.revision };
  return { base_model_name_or_path: SHIPPED_BASE[baseModel] ?? baseModel, revision: null };
}

/** A hub ref as a run config's `model.base_model` spells it. */
export function hubRefText(ref: HubRef): string {
  return ref.revision === 'main' ? `hf:${ref.id}` : `hf:${ref.id}@${ref.revision}`;
}

export interface DownloadProgress {
  file: string;
  loaded: number;
  /** null when the server sends no length. */
  total: number | null;
}

/** Where downloaded files are kept: complete files by key, and the bytes so far of an interrupted one. */
export interface DownloadCache {
  get(key: string): Promise<Uint8Array | null>;
  put(key: string, bytes: Uint8Array): Promise<void>;
  getPartial(key: string): Promise<Uint8Array | null>;
  putPartial(key: string, bytes: Uint8Array): Promise<void>;
  deletePartial(key: string): Promise<void>;
}

export interface HubOptions {
  endpoint?: string;
  fetchImpl?: typeof fetch;
  cache?: DownloadCache | null;
  onProgress?: (p: DownloadProgress) => void;
  /** Bytes between saves of a partial file (what an interruption can lose). */
  checkpointBytes?: number;
}

export function hubSource(ref: HubRef, opts: HubOptions = {}): FileSource {
  const root = `${(opts.endpoint ?? HUB_ENDPOINT).replace(/\/$/, '')}/${ref.id}/resolve/${encodeURIComponent(ref.revision)}/`;
  return {
    description: `${ref.id}@${ref.revision} (${root})`,
    read: (name) => download(root + name, `${ref.id}/${ref.revision}/${name}`, name, opts),
  };
}

async function download(url: string, key: string, file: string, opts: HubOptions): Promise<Uint8Array | null> {
  const cache = opts.cache ?? null;
  const cached = await cache?.get(key);
  if (cached) {
    opts.onProgress?.({ file, loaded: cached.length, total: cached.length });
    return cached;
  }
  const partial = (await cache?.getPartial(key)) ?? null;
  const headers: Record<string, string> = partial?.length ? { Range: `bytes=${partial.length}-` } : {};
  const response = await (opts.fetchImpl ?? fetch)(url, { headers });
  if (response.status === 404) return null;
  if (response.status === 401 || response.status === 403) {
    throw new Error(`GET ${url}: HTTP ${response.status}; the model is gated or private. Download it with a token and load the folder instead.`);
  }
  if (!response.ok) throw new Error(`GET ${url} failed: HTTP ${response.status} ${response.statusText}`);
  // 206: the server continues where the partial file stops; 200: it ignored the range, start over.
  const start = response.status === 206 && partial ? partial : new Uint8Array(0);
  const length = Number(response.headers.get('content-length'));
  const total = Number.isFinite(length) && length > 0 ? start.length + length : null;
  const chunks: Uint8Array[] = start.length ? [start] : [];
  let loaded = start.length;
  let sinceSave = 0;
  const every = opts.checkpointBytes ?? 16 << 20;
  opts.onProgress?.({ file, loaded, total });
  const reader = response.body?.getReader();
  if (!reader) throw new Error(`GET ${url}: the response has no body.`);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.length;
    sinceSave += value.length;
    opts.onProgress?.({ file, loaded, total });
    if (cache && sinceSave >= every) {
      await cache.putPartial(key, concat(chunks, loaded));
      sinceSave = 0;
    }
  }
  if (total !== null && loaded !== total) throw new Error(`GET ${url}: got ${loaded} of ${total} bytes; the download was cut off (run again to resume).`);
  const bytes = concat(chunks, loaded);
  if (cache) {
    await cache.put(key, bytes);
    await cache.deletePartial(key);
  }
  return bytes;
}

function concat(chunks: Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(length);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** Node: files under `dir/<id>/<revision>/`, partial ones beside them as `<name>.part`. */
export function diskCache(dir: string): DownloadCache {
  const fs = async () => (await import(/* @vite-ignore */ ['node:fs', 'promises'].join('/'))) as typeof import('node:fs/promises');
  const path = (key: string) => `${dir}/${key}`;
  const read = async (p: string) => {
    try {
      return new Uint8Array(await (await fs()).readFile(p));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  };
  const write = async (p: string, bytes: Uint8Array) => {
    const f = await fs();
    await f.mkdir(p.slice(0, p.lastIndexOf('/')), { recursive: true });
    // Write then rename, so a crash never leaves a truncated file that reads as complete.
    await f.writeFile(`${p}.tmp`, bytes);
    await f.rename(`${p}.tmp`, p);
  };
  return {
    get: (key) => read(path(key)),
    put: (key, bytes) => write(path(key), bytes),
    getPartial: (key) => read(`${path(key)}.part`),
    putPartial: (key, bytes) => write(`${path(key)}.part`, bytes),
    deletePartial: async (key) => (await fs()).rm(`${path(key)}.part`, { force: true }),
  };
}

/** Browser: the Cache Storage bucket `spindle-models` (partial files as `…?partial` entries). */
export function browserCache(name = 'spindle-models'): DownloadCache {
  const url = (key: string, partial = false) => `https://spindle.cache/${key}${partial ? '?partial' : ''}`;
  const get = async (key: string, partial: boolean) => {
    const hit = await (await caches.open(name)).match(url(key, partial));
    return hit ? new Uint8Array(await hit.arrayBuffer()) : null;
  };
  const put = async (key: string, bytes: Uint8Array, partial: boolean) => (await caches.open(name)).put(url(key, partial), new Response(bytes as BlobPart));
  return {
    get: (key) => get(key, false),
    put: (key, bytes) => put(key, bytes, false),
    getPartial: (key) => get(key, true),
    putPartial: (key, bytes) => put(key, bytes, true),
    deletePartial: async (key) => void (await (await caches.open(name)).delete(url(key, true))),
  };
}
