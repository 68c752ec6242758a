/**
 * One file from the hub, over HTTP, into the cache: the transfer that hub.ts's source runs per file.
 * Its contract, in the order a download meets it:
 *
 *   1. Resume only what can be proven to continue: kept bytes (`.part`) are resumed with
 *      `Range: bytes=<kept>-` and `If-Range: <the strong ETag they came with>`; bytes with no strong
 *      ETag, or as long as the announced file or longer, are dropped and the file starts from zero.
 *   2. A 206 must continue exactly: its Content-Range starts at the kept length, ends at the file's
 *      last byte, names the same total, and its ETag (if any) is the kept one; anything else (a 206
 *      that resends the whole file, a different file) drops the kept bytes and starts again. A 200
 *      to a ranged request (Range ignored, or If-Range saw a changed file) replaces the kept bytes. A
 *      416 (the kept bytes reach past the end) starts again, once, instead of failing forever.
 *   3. Size: the announced size (the hub's X-Linked-Size, else Content-Length or the Content-Range
 *      total) must be within the file's limit (`sizeLimitFor`: 64 MiB for configs and tokenizers,
 *      8 GiB for weights) before a byte is kept; the body may not run past it. A body with no announced
 *      size (chunked) is held to the limit as it arrives, and a safetensors body also to the length its
 *      header declares, checked at its first bytes (a foreign or oversized header ends it there).
 *   4. Content: the bytes must have the announced size, the hub's SHA-256 for LFS files
 *      (X-Linked-Etag), and the shape of their kind (JSON parses, safetensors tiles to its last byte).
 *      Only then do they count as cached; a resumed file that fails the hash starts once from zero.
 *   5. Limits in time (src/net.ts): a connect timeout, and a body that must keep arriving; retries with
 *      backoff, honouring Retry-After, within a budget of tries and waiting that the error states.
 *   6. Bytes go to the partial file as they arrive, each checkpoint's worth appended, so memory holds
 *      about a checkpoint (16 MiB) of the file, not the body so far; the file is read back once whole
 *      to be checked, and becomes the cached file by a rename, so a 1 GiB shard is written about once.
 *      Only a partial file that can be resumed (a strong ETag) outlives a transient failure (a cut, a
 *      stall, a Ctrl-C); after any other failure it is removed, so the cache never keeps a bad file.
 * The hub answers LFS files with a redirect whose headers carry their metadata (X-Repo-Commit,
 * X-Linked-Etag, X-Linked-Size): redirects are followed by hand where the platform shows them (Node),
 * and by fetch where it hides them (browsers; there the size and ETag of the final answer are used).
 */
import {
  contentProblem,
  declaredLength,
  records,
  sha256Hex,
  type DownloadCache,
  type PartialRecord,
} from './hub-cache.ts';
import {
  boundedChunks,
  concatBytes,
  describePolicy,
  fetchWithTimeout,
  formatBytes,
  GiB,
  MiB,
  NetError,
  parseRetryAfter,
  retryableStatus,
  retryDelay,
  sleep,
  type RetryPolicy,
} from '../net.ts';

export interface DownloadProgress {
  file: string;
  loaded: number;
  /** null when the server sends no length. */
  total: number | null;
  /** Bytes of the file held in memory: at most about a checkpoint's worth where the cache keeps a partial file. */
  buffered: number;
}

export interface TransferLimits {
  /** Until a response's headers arrive (default 30 s). */
  connectTimeoutMs: number;
  /** A body must bring 64 KiB (or its rest) in every window this long (default 30 s). */
  idleTimeoutMs: number;
  minWindowBytes?: number;
}

export interface TransferOptions {
  fetchImpl: typeof fetch;
  cache: DownloadCache | null;
  onProgress?: (p: DownloadProgress) => void;
  /** Bytes between appends to the partial file (what an interruption can lose). */
  checkpointBytes: number;
  limits: TransferLimits;
  retry: RetryPolicy;
  /** Overrides `sizeLimitFor`. */
  maxFileBytes?: number;
  /** A user's stop (Ctrl-C): the transfer keeps what it has and ends, saying how to resume. */
  signal?: AbortSignal;
  /** How a retry waits out its delay (default: a timer, cut short by `signal`; a test records the delays). */
  wait?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export const DEFAULT_LIMITS: TransferLimits = { connectTimeoutMs: 30_000, idleTimeoutMs: 30_000 };
export const DEFAULT_RETRY: RetryPolicy = { attempts: 5, baseDelayMs: 1000, maxDelayMs: 30_000, budgetMs: 120_000 };

const WEIGHTS = /\.(safetensors|bin|pt|pth|gguf|onnx|h5|msgpack)$/i;

/**
 * The largest file accepted: weights are loaded into memory whole (no shard Spindle can train is near 8 GiB);
 * anything else is a config, a tokenizer or a card.
 */
export function sizeLimitFor(file: string): number {
  return WEIGHTS.test(file) ? 8 * GiB : 64 * MiB;
}

/** What the hub says about a file, gathered across redirects. */
interface HubHeaders {
  commit: string | null;
  sha256: string | null;
  linkedSize: number | null;
}

interface Served {
  response: Response;
  controller: AbortController;
  hub: HubHeaders;
}

export interface TransferRequest {
  url: string;
  file: string;
  /** The cache key; null until the first answer names the commit (then `resolve` gives key and URL). */
  key: string | null;
  /** The commit this file must come from (X-Repo-Commit must agree), or null. */
  commit: string | null;
  resolve?: (commit: string | null) => { key: string; url: string; commit: string | null };
}

const count = (text: string | null) => (text !== null && /^\d+$/.test(text.trim()) ? Number(text) : null);
const strongEtag = (etag: string | null) => (etag && !etag.startsWith('W/') ? etag : null);

function gather(hub: HubHeaders, headers: Headers) {
  hub.commit ??= headers.get('x-repo-commit');
  const linked = headers.get('x-linked-etag')?.replace(/^W\//, '').replace(/"/g, '').toLowerCase() ?? null;
  if (linked && /^[0-9a-f]{64}$/.test(linked)) hub.sha256 ??= linked;
  hub.linkedSize ??= count(headers.get('x-linked-size'));
}

/** GET with redirects followed by hand (their headers carry the hub's metadata). */
async function request(o: TransferOptions, url: string, headers: Record<string, string>): Promise<Served> {
  const hub: HubHeaders = { commit: null, sha256: null, linkedSize: null };
  let current = url;
  for (let hop = 0; hop <= 5; hop++) {
    const served = await fetchWithTimeout(
      o.fetchImpl,
      current,
      { headers, redirect: 'manual' },
      o.limits.connectTimeoutMs,
      o.signal,
    );
    gather(hub, served.response.headers);
    if (served.response.type === 'opaqueredirect') {
      // A browser hides the redirect's headers and target: let fetch follow it.
      const followed = await fetchWithTimeout(
        o.fetchImpl,
        current,
        { headers, redirect: 'follow' },
        o.limits.connectTimeoutMs,
        o.signal,
      );
      gather(hub, followed.response.headers);
      return { ...followed, hub };
    }
    const location = served.response.headers.get('location');
    if (served.response.status < 300 || served.response.status >= 400 || !location) return { ...served, hub };
    await served.response.body?.cancel().catch(() => {});
    current = new URL(location, current).href;
  }
  throw new NetError('network', url, `GET ${url}: more than 5 redirects`, false);
}

/** Thrown to start the file again from zero (not a retry: nothing failed on the network). */
class Restart extends Error {}

/** Downloads one file (null when the server says it does not exist), verified, into the cache. */
export async function transfer(req: TransferRequest, o: TransferOptions): Promise<Uint8Array | null> {
  return new FileTransfer(req, o).run();
}

class FileTransfer {
  private url: string;
  private key: string | null;
  private commit: string | null;
  private record: PartialRecord | null = null;
  /** Bytes of the file so far: in the partial file and in `unsaved` (or in `held` when nothing is written). */
  private length = 0;
  /** The whole file so far, kept in memory only where there is no partial file to write to (see `streams`). */
  private held: Uint8Array[] = [];
  /** Bytes at the end of the file not yet in the partial file. */
  private unsaved: Uint8Array[] = [];
  private unsavedLength = 0;
  /** What the file's first bytes declare its length to be (safetensors), once they have arrived. */
  private declared: DeclaredLength;
  /** Whether the bytes in hand continue earlier ones (a failed hash then means a bad splice). */
  private resumed = false;
  /**
   * The partial file on disk must be emptied (and the new record written) before the next append.
   * Deferred to that append rather than done on the headers: a body must be read as soon as it arrives,
   * because a stream that errors drops the bytes it had queued.
   */
  private resetPending = false;
  private readonly maxBytes: number;

  constructor(
    private readonly req: TransferRequest,
    private readonly o: TransferOptions,
  ) {
    this.url = req.url;
    this.key = req.key;
    this.commit = req.commit;
    this.maxBytes = o.maxFileBytes ?? sizeLimitFor(req.file);
    this.declared = new DeclaredLength(req.file);
  }

  private get cache() {
    return this.o.cache;
  }

  /**
   * Whether the bytes go to the partial file as they arrive (every checkpoint), so memory holds at most a
   * checkpoint's worth: with a cache that appends, whether or not the bytes can be resumed later.
   */
  private get streams(): boolean {
    return Boolean(this.cache?.appendPartial && this.key);
  }

  /** Bytes of this file held in memory now. */
  private get buffered(): number {
    return (this.streams ? this.unsavedLength : this.length) + this.declared.buffered;
  }

  async run(): Promise<Uint8Array | null> {
    await this.loadPartial();
    let retry = 0;
    let waited = 0;
    let restarts = 0;
    const started = Date.now();
    for (;;) {
      let failure: NetError;
      try {
        return await this.attempt();
      } catch (err) {
        if (err instanceof Restart) {
          if (++restarts > 3)
            throw await this.fail(`the server's answers do not fit together (${err.message}), even from zero`, false);
          this.forget();
          continue;
        }
        const interrupted = this.o.signal?.aborted === true;
        const retryable = err instanceof NetError && err.retryable;
        if (interrupted || retryable) await this.saveUnsaved().catch(() => {});
        if (interrupted) throw await this.fail(`interrupted after ${formatBytes(this.length)}`, true);
        if (!(err instanceof NetError)) {
          await this.removePartial();
          throw err;
        }
        if (!retryable) throw await this.fail(err.message, false);
        failure = err;
      }
      const delay = retryDelay(++retry, waited, this.o.retry, failure.retryAfterMs);
      if (delay === null) {
        const spent = `${retry} ${retry === 1 ? 'try' : 'tries'} in ${Math.round((Date.now() - started) / 1000)} s (retry budget: ${describePolicy(this.o.retry)})`;
        throw await this.fail(`${failure.message}; gave up after ${spent}`, true);
      }
      await (this.o.wait ?? sleep)(delay, this.o.signal);
      waited += delay;
    }
  }

  /** Kept bytes count only with a record naming their strong ETag and shorter than the file. */
  private async loadPartial() {
    if (!this.cache || !this.key) return;
    const record = await records.partial(this.cache, this.key);
    const part = record ? await this.cache.getPartial(this.key) : null;
    if (
      record &&
      part &&
      part.length > 0 &&
      (record.size === null || part.length < record.size) &&
      this.canStart(part)
    ) {
      this.record = record;
      this.length = part.length;
      if (!this.streams) this.held = [part];
      this.resumed = true;
    } else {
      await records.dropPartial(this.cache, this.key);
    }
  }

  /** Whether kept bytes can start this kind of file (a safetensors header); else they are dropped, never resumed. */
  private canStart(part: Uint8Array): boolean {
    try {
      this.declared.feed(part);
      return true;
    } catch {
      this.declared = new DeclaredLength(this.req.file);
      return false;
    }
  }

  /** Drops the bytes in hand; the partial file follows at the next save. */
  private forget() {
    this.held = [];
    this.length = 0;
    this.unsaved = [];
    this.unsavedLength = 0;
    this.declared = new DeclaredLength(this.req.file);
    this.record = null;
    this.resumed = false;
    this.resetPending = true;
  }

  private async attempt(): Promise<Uint8Array | null> {
    const headers: Record<string, string> = { 'accept-encoding': 'identity' };
    if (this.length > 0 && this.record) {
      headers.range = `bytes=${this.length}-`;
      headers['if-range'] = this.record.etag;
    }
    const { response, controller, hub } = await request(this.o, this.url, headers);
    const { status } = response;
    const cancel = () => void response.body?.cancel().catch(() => {});
    if (status === 404) {
      cancel();
      return null;
    }
    this.refuse(response, hub, cancel);
    if (!this.key && this.req.resolve) {
      const resolved = this.req.resolve(hub.commit);
      this.key = resolved.key;
      this.url = resolved.url;
      this.commit = resolved.commit;
    }
    const encoded = !['', 'identity'].includes((response.headers.get('content-encoding') ?? '').toLowerCase());
    const etag = encoded ? null : strongEtag(response.headers.get('etag'));
    const total = this.expectedTotal(response, encoded, etag, hub, cancel);
    if (this.length === 0) {
      // Without a strong ETag nothing can prove that later bytes continue these: they are not kept for a resume.
      this.record = etag ? { etag, size: total, sha256: hub.sha256, url: this.url } : null;
      this.resetPending = true;
    }
    await this.receive(response, controller, total);
    if (total !== null && this.length !== total) {
      throw new NetError(
        'network',
        this.url,
        `GET ${this.url}: got ${formatBytes(this.length)} of ${formatBytes(total)}; the download was cut off`,
        true,
      );
    }
    return this.finish(hub.sha256 ?? this.record?.sha256 ?? null, etag);
  }

  /** Throws for a response that cannot give the file (gated, a refused range, an error status, another commit). */
  private refuse(response: Response, hub: HubHeaders, cancel: () => void): void {
    const { status } = response;
    if (status === 401 || status === 403) {
      cancel();
      throw new NetError(
        'http',
        this.url,
        `GET ${this.url}: HTTP ${status}; the model is gated or private. Download it with a token and load the folder instead`,
        false,
        status,
      );
    }
    if (status === 416) {
      cancel();
      throw new Restart(`HTTP 416 for bytes ${this.length}- of the kept file`);
    }
    if (!response.ok) {
      cancel();
      const retryable = retryableStatus(status);
      throw new NetError(
        'http',
        this.url,
        `GET ${this.url}: HTTP ${status} ${response.statusText}`.trim(),
        retryable,
        status,
        parseRetryAfter(response.headers.get('retry-after')),
      );
    }
    if (this.commit && hub.commit && hub.commit !== this.commit) {
      cancel();
      throw new NetError(
        'http',
        this.url,
        `GET ${this.url}: the hub served commit ${hub.commit}, not ${this.commit} that this model is pinned to`,
        false,
      );
    }
  }

  /**
   * The file's size as the hub and the response say it (null: unknown), a 206 checked as the continuation of
   * the kept bytes; throws when the two disagree or it is above the file's limit.
   */
  private expectedTotal(
    response: Response,
    encoded: boolean,
    etag: string | null,
    hub: HubHeaders,
    cancel: () => void,
  ): number | null {
    const { status } = response;
    let total: number | null;
    if (status === 206) {
      total = this.checkContinuation(response, etag, hub);
    } else {
      if (this.length > 0) this.forget(); // Range ignored, or If-Range saw a changed file: these bytes start over
      total = hub.linkedSize ?? (encoded ? null : count(response.headers.get('content-length')));
    }
    const announced = encoded ? null : count(response.headers.get('content-length'));
    if (status === 200 && total !== null && announced !== null && announced !== total) {
      cancel();
      throw new NetError(
        'http',
        this.url,
        `GET ${this.url}: the server sends ${formatBytes(announced)} for a file the hub says is ${formatBytes(total)}`,
        true,
      );
    }
    if (total !== null && total > this.maxBytes) {
      cancel();
      throw new NetError(
        'too-big',
        this.url,
        `GET ${this.url}: the server announces ${formatBytes(total)} for ${this.req.file}, over the ${formatBytes(this.maxBytes)} accepted for such a file; is this the right repository?`,
        false,
      );
    }
    return total;
  }

  /** A 206 continues the kept bytes only if it says so exactly; else the file starts again. */
  private checkContinuation(response: Response, etag: string | null, hub: HubHeaders): number {
    const range = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(response.headers.get('content-range')?.trim() ?? '');
    const [start, end] = range ? [Number(range[1]), Number(range[2])] : [NaN, NaN];
    const total = range && range[3] !== '*' ? Number(range[3]) : (hub.linkedSize ?? this.record?.size ?? null);
    const problems = [
      !range && `no usable Content-Range ("${response.headers.get('content-range') ?? ''}")`,
      range && start !== this.length && `it starts at byte ${start}, not at the ${this.length} kept`,
      range && total !== null && end !== total - 1 && `it ends at byte ${end} of ${total}`,
      this.record?.size != null &&
        total !== null &&
        total !== this.record.size &&
        `the file is now ${total} bytes, not ${this.record.size}`,
      this.record && etag && etag !== this.record.etag && `its ETag ${etag} is not the kept ${this.record.etag}`,
    ].filter(Boolean);
    if (problems.length || this.length === 0) {
      void response.body?.cancel().catch(() => {});
      throw new Restart(
        `a 206 that does not continue the kept bytes: ${problems.join('; ') || 'nothing was asked for'}`,
      );
    }
    this.resumed = true;
    return total as number;
  }

  private async receive(response: Response, controller: AbortController, total: number | null) {
    const file = this.req.file;
    const expected = total === null ? null : total - this.length;
    const progress = () => this.o.onProgress?.({ file, loaded: this.length, total, buffered: this.buffered });
    progress();
    const limits = { ...this.o.limits, maxBytes: this.maxBytes - this.length };
    for await (const chunk of boundedChunks(response, controller, this.url, limits, expected)) {
      if (!this.streams) this.held.push(chunk);
      this.length += chunk.length;
      this.unsaved.push(chunk);
      this.unsavedLength += chunk.length;
      this.checkDeclared(chunk, controller);
      progress();
      if (this.unsavedLength >= this.o.checkpointBytes) await this.saveUnsaved();
    }
  }

  /** Holds the body to the length its first bytes declare (a safetensors header), within the file's limit. */
  private checkDeclared(chunk: Uint8Array, controller: AbortController) {
    const refuse = (message: string) => {
      controller.abort();
      return new NetError('too-big', this.url, `GET ${this.url}: ${message}`, false);
    };
    try {
      this.declared.feed(chunk);
    } catch (err) {
      throw refuse(`${this.req.file} cannot be the file: ${(err as Error).message}`);
    }
    const declared = this.declared.length;
    if (declared === null) return;
    if (declared > this.maxBytes) {
      const limit = formatBytes(this.maxBytes);
      throw refuse(
        `the header of ${this.req.file} declares ${formatBytes(declared)}, over the ${limit} accepted for such a file`,
      );
    }
    if (this.length > declared) {
      throw refuse(`the server sent more than the ${formatBytes(declared)} the header of ${this.req.file} declares`);
    }
  }

  /** Appends the bytes not yet kept to the partial file. */
  private async saveUnsaved() {
    if (!this.cache || !this.key) return;
    if (this.resetPending) {
      await records.dropPartial(this.cache, this.key);
      if (this.record) await records.putPartial(this.cache, this.key, this.record);
      this.resetPending = false;
    }
    if (this.unsavedLength === 0) return;
    if (this.streams) {
      await this.cache.appendPartial!(this.key, concatBytes(this.unsaved, this.unsavedLength));
    } else if (this.record) {
      await this.cache.putPartial(this.key, concatBytes(this.held, this.length));
    } else {
      return; // nothing to resume from: the bytes stay in `held` only
    }
    this.unsaved = [];
    this.unsavedLength = 0;
  }

  /** The whole file: read back from the partial file when it was written there. */
  private async whole(): Promise<Uint8Array> {
    if (!this.streams) return concatBytes(this.held, this.length);
    await this.saveUnsaved();
    const bytes = await this.cache!.getPartial(this.key!);
    if (!bytes || bytes.length !== this.length) {
      const held = `the partial file of ${this.req.file} holds ${bytes?.length ?? 0} bytes where ${this.length} were written`;
      throw new NetError('network', this.url, `GET ${this.url}: ${held}; the disk lost some`, false);
    }
    return bytes;
  }

  /** Checks the whole file, then makes it the cached one. */
  private async finish(expectedSha: string | null, etag: string | null): Promise<Uint8Array> {
    const bytes = await this.whole();
    const sha256 = await sha256Hex(bytes);
    if (expectedSha && sha256 && sha256 !== expectedSha) {
      if (this.resumed) throw new Restart('the resumed file does not have the SHA-256 the hub gives');
      await this.removePartial();
      throw new NetError(
        'http',
        this.url,
        `GET ${this.url}: ${this.req.file} has SHA-256 ${sha256}, but the hub gives ${expectedSha}; it was not kept`,
        false,
      );
    }
    const problem = contentProblem(this.req.file, bytes);
    if (problem) {
      await this.removePartial();
      throw new NetError(
        'http',
        this.url,
        `GET ${this.url}: ${this.req.file} cannot be the file: ${problem}; it was not kept`,
        false,
      );
    }
    if (this.cache && this.key) {
      const key = this.key;
      if (this.streams && this.cache.commitPartial) {
        await this.cache.commitPartial(key, bytes.length);
      } else {
        await this.cache.put(key, bytes);
        await this.cache.deletePartial(key);
      }
      await records.putEntry(this.cache, key, {
        size: bytes.length,
        sha256: expectedSha ?? sha256,
        etag,
        url: this.url,
      });
      await records.dropPartial(this.cache, key);
    }
    return bytes;
  }

  /** Forgets the bytes and removes the partial file and its record: nothing of this download stays in the cache. */
  private async removePartial() {
    this.forget();
    this.resetPending = false;
    if (this.cache && this.key) await records.dropPartial(this.cache, this.key).catch(() => {});
  }

  /**
   * The final error: the file, the URL (in the reason), what is kept and how to go on. Only a download
   * that can be resumed (a strong ETag, a transient failure) leaves its partial file; any other is removed.
   */
  private async fail(reason: string, transient: boolean): Promise<Error> {
    const kept = transient && this.record && this.cache && this.key && this.length > 0 ? this.length : 0;
    if (!kept) await this.removePartial();
    const next = !transient
      ? ''
      : kept
        ? ` ${formatBytes(kept)} are kept; run the same command again to resume from there.`
        : ' Run the same command again to try again.';
    return new Error(`Downloading ${this.req.file} failed: ${reason}.${next}`);
  }
}

/** The length a file's first bytes declare (hub-cache.ts `declaredLength`), holding those bytes only until it is known. */
class DeclaredLength {
  private prefix: Uint8Array[] = [];
  private prefixLength = 0;
  private need = 0;
  /** null: not known (yet, or ever for this kind of file). */
  length: number | null = null;
  private done: boolean;

  constructor(private readonly file: string) {
    this.done = declaredLength(file, new Uint8Array(0)) === null;
  }

  get buffered(): number {
    return this.prefixLength;
  }

  /** Takes the file's next bytes; throws when the first ones cannot start such a file. */
  feed(chunk: Uint8Array) {
    if (this.done) return;
    this.prefix.push(chunk);
    this.prefixLength += chunk.length;
    if (this.prefixLength < this.need) return;
    const bytes = concatBytes(this.prefix, this.prefixLength);
    this.prefix = [bytes];
    const said = declaredLength(this.file, bytes);
    if (said && 'need' in said) {
      this.need = said.need;
      return;
    }
    this.length = said?.length ?? null;
    this.done = true;
    this.prefix = [];
    this.prefixLength = 0;
  }
}
