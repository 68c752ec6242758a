/**
 * Models from the Hugging Face hub by id (`hf:HuggingFaceTB/SmolLM2-135M-Instruct`, `hf:Qwen/Qwen3-0.6B@<rev>`)
 * or by URL (`https://huggingface.co/<id>/resolve/<rev>/`), as a FileSource that:
 *   - pins a revision to a commit once: the first answer's X-Repo-Commit is kept in the cache
 *     (`@refs/<id>/<revision>`), every later file is fetched at that commit and cached under it, so a
 *     cache never mixes two revisions, and a model loaded once loads again with no request at all
 *     (offline too: a file the commit lacks, like a sharded repo's model.safetensors, is remembered as
 *     missing). A newer `main` is taken only with `refresh` (or by loading `@<commit>`). A server that
 *     names no commit (a plain mirror) is cached under the revision's name, kept as first seen just the same;
 *   - downloads each file through hub-transfer.ts (resume only with If-Range on the ETag, Content-Range
 *     checked, size and SHA-256 verified, timeouts, a size limit, retries within a budget);
 *   - reads a cached file only after checking it against its record (size, SHA-256, the shape of a JSON
 *     or safetensors file): a damaged one is removed and named, with what to run;
 *   - refuses ids, revisions and file names that could leave the cache's folder (`..`).
 * The endpoint is an option so tests serve files from 127.0.0.1; nothing here reaches the internet by itself.
 */
import type { FileSource } from './hf-layout.ts';
import { contentProblem, records, sha256Hex, type DownloadCache } from './hub-cache.ts';
import {
  DEFAULT_LIMITS,
  DEFAULT_RETRY,
  transfer,
  type DownloadProgress,
  type TransferLimits,
  type TransferOptions,
} from './hub-transfer.ts';
import type { RetryPolicy } from '../net.ts';

export { browserCache, diskCache, type DownloadCache } from './hub-cache.ts';
export type { DownloadProgress } from './hub-transfer.ts';

export interface HubRef {
  id: string;
  revision: string;
}

const HUB_ENDPOINT = 'https://huggingface.co';
const ID = /^[\w.-]+\/[\w.-]+$/;
const COMMIT = /^[0-9a-f]{40}$/;
/** A path segment that would leave its folder, or an empty one. */
const escapes = (path: string) => path.split('/').some((s) => s === '' || s === '.' || s === '..');

/** `hf:<owner>/<name>[@<revision>]` or a huggingface.co model URL; null for anything else (a folder, another URL). */
export function parseHubRef(text: string, endpoint = HUB_ENDPOINT): HubRef | null {
  if (text.startsWith('hf:')) {
    const [id, revision = 'main'] = text.slice(3).split('@');
    if (!ID.test(id) || escapes(id) || !/^[\w./-]+$/.test(revision) || escapes(revision))
      throw new Error(`"${text}" is not a hub model id; expected hf:<owner>/<name> or hf:<owner>/<name>@<revision>.`);
    return { id, revision };
  }
  const base = endpoint.replace(/\/$/, '');
  if (!text.startsWith(base + '/')) return null;
  const m = /^([\w.-]+\/[\w.-]+)(?:\/(?:resolve|tree)\/([^/]+))?\/?$/.exec(text.slice(base.length + 1));
  if (!m || escapes(m[1]) || (m[2] !== undefined && escapes(m[2]))) return null;
  return { id: m[1], revision: m[2] ?? 'main' };
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

export interface HubOptions {
  endpoint?: string;
  fetchImpl?: typeof fetch;
  cache?: DownloadCache | null;
  onProgress?: (p: DownloadProgress) => void;
  /** Bytes between appends to a partial file (what an interruption can lose; default 16 MiB). */
  checkpointBytes?: number;
  /** Connect and body timeouts (default 30 s each; the body must bring 64 KiB per window). */
  limits?: Partial<TransferLimits>;
  /** Tries and waiting budget (default 5 tries, 2 minutes of waiting). */
  retry?: Partial<RetryPolicy>;
  /** The largest file accepted (default: 64 MiB for configs and tokenizers, 8 GiB for weights). */
  maxFileBytes?: number;
  /** Resolve the revision again instead of using the commit the cache pinned it to. */
  refresh?: boolean;
  /** A user's stop (the CLI's Ctrl-C): a download keeps what it has and ends, saying how to resume. */
  signal?: AbortSignal;
  /** How a retry waits out its delay (default: a timer; a test records the delays instead). */
  wait?: TransferOptions['wait'];
}

/** A file name from a model's own files (an index's shard list): refused if it could leave the model's folder. */
function checkFileName(name: string): void {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (name.startsWith('/') || name.includes('\\') || escapes(name) || /[\u0000-\u001f]/.test(name)) {
    throw new Error(
      `Refusing to download "${name}" from the hub: a file name may not leave the model's folder (no "..", no absolute path).`,
    );
  }
}

const segmentsOf = (name: string) => name.split('/').map(encodeURIComponent).join('/');

export function hubSource(ref: HubRef, opts: HubOptions = {}): FileSource {
  const base = `${(opts.endpoint ?? HUB_ENDPOINT).replace(/\/$/, '')}/${ref.id}/resolve/`;
  const cache = opts.cache ?? null;
  const urlOf = (revision: string, name: string) => `${base}${encodeURIComponent(revision)}/${segmentsOf(name)}`;
  const transferOptions = transferOptionsOf(opts, cache);
  /** The commit files come from: a string, null (the server names none: keyed by the revision), or undefined (not resolved yet). */
  let pin: { commit: string | null } | undefined = COMMIT.test(ref.revision) ? { commit: ref.revision } : undefined;
  let cacheRead = Boolean(opts.refresh);
  /** The first download, which resolves the revision; others wait for it rather than resolve it again. */
  let resolving: Promise<unknown> | null = null;
  const keyOf = (p: { commit: string | null }, name: string) => `${ref.id}/${p.commit ?? ref.revision}/${name}`;
  const pinned = async () => {
    if (!pin && !cacheRead && cache) pin = (await records.ref(cache, ref.id, ref.revision)) ?? undefined;
    cacheRead = true;
    return pin;
  };

  const read = async (name: string): Promise<Uint8Array | null> => {
    checkFileName(name);
    if (resolving) await resolving.catch(() => {});
    const p = await pinned();
    if (p) {
      const hit = cache ? await cachedFile(cache, ref, p.commit, name, keyOf(p, name)) : null;
      if (hit === 'missing') return null;
      if (hit) {
        opts.onProgress?.({ file: name, loaded: hit.length, total: hit.length, buffered: hit.length });
        return hit;
      }
      const key = keyOf(p, name);
      const bytes = await transfer(
        { url: urlOf(p.commit ?? ref.revision, name), file: name, key, commit: p.commit },
        transferOptions,
      );
      // Remembered like any cached file: a commit never changes, and a revision the server names no commit for is taken as it was first seen.
      if (bytes === null && cache) await records.putMissing(cache, key);
      return bytes;
    }
    // Not resolved yet: this request's X-Repo-Commit pins the revision, for this file and every later one.
    let saveRef: Promise<void> | null = null;
    const first = transfer(
      {
        url: urlOf(ref.revision, name),
        file: name,
        key: null,
        commit: null,
        resolve: (commit) => {
          pin = { commit: commit && COMMIT.test(commit) ? commit : null };
          if (cache) saveRef = records.putRef(cache, ref.id, ref.revision, pin.commit);
          return { key: keyOf(pin, name), url: urlOf(pin.commit ?? ref.revision, name), commit: pin.commit };
        },
      },
      transferOptions,
    );
    resolving = first;
    try {
      return await first;
    } finally {
      resolving = null;
      await saveRef;
    }
  };

  return {
    get description() {
      const commit = pin?.commit && pin.commit !== ref.revision ? ` = commit ${pin.commit.slice(0, 12)}` : '';
      return `${ref.id}@${ref.revision}${commit} (${base}${encodeURIComponent(ref.revision)}/)`;
    },
    read,
  };
}

/** The options of every transfer of one hub source: the defaults under what the caller set. */
function transferOptionsOf(opts: HubOptions, cache: DownloadCache | null): TransferOptions {
  return {
    fetchImpl: opts.fetchImpl ?? ((input, init) => fetch(input, init)),
    cache,
    onProgress: opts.onProgress,
    checkpointBytes: opts.checkpointBytes ?? 16 << 20,
    limits: { ...DEFAULT_LIMITS, ...opts.limits },
    retry: { ...DEFAULT_RETRY, ...opts.retry },
    maxFileBytes: opts.maxFileBytes,
    signal: opts.signal,
    wait: opts.wait,
  };
}

/**
 * A cached file checked against its record (size, SHA-256, content); 'missing' when the commit lacks it; null when
 * not cached. A damaged one is dropped from the cache and throws, saying to load the model again.
 */
async function cachedFile(
  cache: DownloadCache,
  ref: HubRef,
  commit: string | null,
  name: string,
  key: string,
): Promise<Uint8Array | 'missing' | null> {
  if (await records.missing(cache, key)) return 'missing';
  const record = await records.entry(cache, key);
  const bytes = record ? await cache.get(key) : null;
  if (!record || !bytes) return null;
  const sha = bytes.length === record.size && record.sha256 ? await sha256Hex(bytes) : null;
  const problem =
    bytes.length !== record.size
      ? `it has ${bytes.length} bytes, not the ${record.size} downloaded`
      : sha && sha !== record.sha256
        ? `its SHA-256 is ${sha}, not ${record.sha256}`
        : contentProblem(name, bytes);
  if (problem) {
    await records.dropEntry(cache, key);
    const where = cache.locate?.(key) ?? key;
    throw new Error(
      `The cached ${name} of ${ref.id}@${commit ?? ref.revision} (${where}) is damaged: ${problem}. It was removed from the cache; load ${hubRefText(ref)} again (the same command) to download it anew.`,
    );
  }
  return bytes;
}
