/**
 * Bounded network reads, shared by hub downloads (hub/hub-transfer.ts), plain model URLs (hub/hf.ts), remote
 * judges (judge/chat-client.ts), the Atropos client and environment files from a URL; a part of its own that
 * imports nothing, so every one of them may import it. Every read here has:
 *
 *   1. a connect timeout: the response headers must arrive within `connectTimeoutMs`;
 *   2. a progress rule for the body: in every window of `idleTimeoutMs` at least `minWindowBytes` (or
 *      the rest of the body, if less) must arrive, so a server that hangs after the headers and one
 *      that drips a byte a second both fail within one window, not after minutes;
 *   3. a size limit: a body (or a Content-Length) over `maxBytes` is refused before it is held;
 *   4. errors that name the URL and say whether trying again can help (`NetError.retryable`).
 *
 * Retry timing (`retryDelay`) is exponential backoff that a server's Retry-After overrides, within a
 * stated budget of tries and waiting time; the caller says so when the budget is spent.
 */

export interface ReadLimits {
  connectTimeoutMs: number;
  idleTimeoutMs: number;
  /** Bytes that must arrive in each idle window (default 64 KiB). */
  minWindowBytes?: number;
  maxBytes: number;
}

export type NetErrorKind = 'timeout' | 'stalled' | 'too-big' | 'network' | 'http';

/** A failed read: what happened to which URL, and whether the same request may succeed later. */
export class NetError extends Error {
  constructor(
    readonly kind: NetErrorKind,
    readonly url: string,
    message: string,
    readonly retryable: boolean,
    readonly status: number | null = null,
    readonly retryAfterMs: number | null = null,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'NetError';
  }
}

export const MiB = 2 ** 20;
export const GiB = 2 ** 30;
const DEFAULT_WINDOW_BYTES = 64 * 1024;

export function formatBytes(n: number): string {
  if (n >= GiB) return `${(n / GiB).toFixed(1)} GiB`;
  if (n >= MiB) return `${(n / MiB).toFixed(1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${n} bytes`;
}

const seconds = (ms: number) => `${+(ms / 1000).toFixed(2)} s`;

/**
 * fetch with a connect timeout. Returns the response and the controller that cancels its body (the
 * body reader below uses it); a timeout or a refused connection is a retryable NetError naming the URL.
 * `stop` (a user's Ctrl-C) cancels the request and its body at any time.
 */
export async function fetchWithTimeout(
  fetchImpl: typeof fetch,
  url: string,
  init: RequestInit,
  connectTimeoutMs: number,
  stop?: AbortSignal,
): Promise<{ response: Response; controller: AbortController }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), connectTimeoutMs);
  // One signal for both, so a long-lived `stop` gains no listener per request.
  const signal = stop ? AbortSignal.any([controller.signal, stop]) : controller.signal;
  try {
    const response = await fetchImpl(url, { ...init, signal });
    return { response, controller };
  } catch (err) {
    if (stop?.aborted) throw new NetError('network', url, `${init.method ?? 'GET'} ${url}: interrupted`, false);
    if (controller.signal.aborted)
      throw new NetError(
        'timeout',
        url,
        `${init.method ?? 'GET'} ${url}: no answer within ${seconds(connectTimeoutMs)}`,
        true,
      );
    throw new NetError('network', url, `${init.method ?? 'GET'} ${url}: ${describeFetchError(err)}`, true, null, null, {
      cause: err,
    });
  } finally {
    clearTimeout(timer);
  }
}

/** The real reason behind undici's "fetch failed" (its cause: ECONNREFUSED, other side closed …). */
export function describeFetchError(err: unknown): string {
  const e = err as { message?: string; cause?: { code?: string; message?: string } };
  const cause = e?.cause;
  if (cause?.code || cause?.message) return [cause.code, cause.message].filter(Boolean).join(' ');
  return e?.message ?? String(err);
}

/** Connection errors that prove the request never reached the server (safe to send again). */
export function neverSent(err: unknown): boolean {
  const code = (err as { cause?: { code?: string } })?.cause?.code ?? (err as { code?: string })?.code;
  return ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT'].includes(
    code ?? '',
  );
}

/**
 * The body of a response, chunk by chunk, under the progress rule and the size limit. `expected` is
 * the announced length (null when unknown): a body longer than announced is refused as it arrives.
 * On any failure the request is cancelled, so nothing keeps the connection open behind the error.
 */
export async function* boundedChunks(
  response: Response,
  controller: AbortController,
  url: string,
  limits: ReadLimits,
  expected: number | null,
): AsyncGenerator<Uint8Array> {
  const reader = response.body?.getReader();
  if (!reader) throw new NetError('network', url, `GET ${url}: the response has no body`, true);
  const minBytes = limits.minWindowBytes ?? DEFAULT_WINDOW_BYTES;
  let received = 0;
  let windowStart = Date.now();
  let windowBytes = 0;
  let pending: Promise<ReadableStreamReadResult<Uint8Array>> | null = null;
  let ended = false;
  const stop = (error: NetError): NetError => {
    controller.abort();
    reader.cancel().catch(() => {});
    return error;
  };
  try {
    for (;;) {
      if (!pending) {
        pending = reader.read();
        pending.catch(() => {}); // abandoned on a stall or limit: its rejection is expected, not unhandled
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<'window'>((resolve) => {
        timer = setTimeout(() => resolve('window'), Math.max(0, windowStart + limits.idleTimeoutMs - Date.now()));
      });
      let result: ReadableStreamReadResult<Uint8Array> | 'window';
      try {
        result = await Promise.race([pending, timeout]);
      } catch (err) {
        throw new NetError(
          'network',
          url,
          `GET ${url}: the connection broke after ${formatBytes(received)} (${describeFetchError(err)})`,
          true,
          null,
          null,
          { cause: err },
        );
      } finally {
        clearTimeout(timer);
      }
      if (result === 'window') {
        const need = expected === null ? minBytes : Math.min(minBytes, expected - received);
        if (windowBytes < need) {
          throw stop(
            new NetError(
              'stalled',
              url,
              `GET ${url}: ${windowBytes === 0 ? 'no bytes' : `only ${formatBytes(windowBytes)}`} in ${seconds(limits.idleTimeoutMs)} after ${formatBytes(received - windowBytes)}; the server stalled`,
              true,
            ),
          );
        }
        windowStart = Date.now();
        windowBytes = 0;
        continue;
      }
      pending = null;
      if (result.done) {
        ended = true;
        return;
      }
      received += result.value.length;
      windowBytes += result.value.length;
      if (received > limits.maxBytes) {
        throw stop(
          new NetError(
            'too-big',
            url,
            `GET ${url}: the body passed ${formatBytes(limits.maxBytes)}, the most accepted for this file`,
            false,
          ),
        );
      }
      if (expected !== null && received > expected) {
        throw stop(
          new NetError(
            'too-big',
            url,
            `GET ${url}: the server sent more than the ${formatBytes(expected)} it announced`,
            false,
          ),
        );
      }
      yield result.value;
    }
  } finally {
    // Left before its end (a stall, a limit, or the caller stopped reading): nothing keeps the connection open.
    if (!ended) {
      controller.abort();
      reader.cancel().catch(() => {});
    }
  }
}

/** A whole body, under the same limits; a Content-Length over the limit is refused before any byte is read. */
export async function readBytes(
  response: Response,
  controller: AbortController,
  url: string,
  limits: ReadLimits,
): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > limits.maxBytes) {
    controller.abort();
    throw new NetError(
      'too-big',
      url,
      `GET ${url}: the server announced ${formatBytes(declared)}, over the ${formatBytes(limits.maxBytes)} accepted here`,
      false,
    );
  }
  const chunks: Uint8Array[] = [];
  let length = 0;
  // Not held to the announced length: a compressed response announces fewer bytes than it decodes to.
  for await (const chunk of boundedChunks(response, controller, url, limits, null)) {
    chunks.push(chunk);
    length += chunk.length;
  }
  return concatBytes(chunks, length);
}

/** A whole (small) body as text, under the same limits. */
export async function readText(
  response: Response,
  controller: AbortController,
  url: string,
  limits: ReadLimits,
): Promise<string> {
  return new TextDecoder().decode(await readBytes(response, controller, url, limits));
}

export function concatBytes(chunks: Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1 && chunks[0].length === length) return chunks[0];
  const out = new Uint8Array(length);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

export interface RetryPolicy {
  /** Tries in all, the first included. */
  attempts: number;
  /** Delay before the first retry; each next one doubles, up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Most time spent waiting between tries, Retry-After included; a wait that would pass it is not made. */
  budgetMs: number;
}

/** Retry-After in milliseconds (seconds or an HTTP date), or null when absent or unreadable. */
export function parseRetryAfter(header: string | null, nowMs: number = Date.now()): number | null {
  const text = header?.trim() ?? '';
  if (!text) return null;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - nowMs);
}

/** HTTP statuses worth another try: timeouts, rate limits, server errors. */
export const retryableStatus = (status: number) => status === 408 || status === 425 || status === 429 || status >= 500;

/**
 * The wait before retry number `retry` (1-based): the server's Retry-After when it sent one, else
 * base · 2^(retry-1) capped at max. null when the policy's tries or waiting budget would be passed.
 */
export function retryDelay(
  retry: number,
  waited: number,
  policy: RetryPolicy,
  retryAfterMs: number | null,
): number | null {
  if (retry >= policy.attempts) return null;
  const delay = retryAfterMs ?? Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return waited + delay > policy.budgetMs ? null : delay;
}

export function describePolicy(policy: RetryPolicy): string {
  return `${policy.attempts} ${policy.attempts === 1 ? 'try' : 'tries'}, ${seconds(policy.budgetMs)} of waiting`;
}

/** Waits `ms`, or less when `stop` fires. */
export const sleep = (ms: number, stop?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      stop?.removeEventListener('abort', done);
      resolve();
    }
    if (stop?.aborted) done();
    else stop?.addEventListener('abort', done, { once: true });
  });
