/**
 * Retry timing for HTTP judges: exponential backoff with jitter, and the server's Retry-After when it
 * sends one (seconds or an HTTP date), capped so a hostile header cannot stall a run.
 */
export interface BackoffOptions {
  /** Delay before the first retry, before jitter. */
  baseMs: number;
  /** Largest backoff delay. */
  maxMs: number;
  /** Largest Retry-After honoured; longer requests are cut to this. */
  maxRetryAfterMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 500, maxMs: 20_000, maxRetryAfterMs: 60_000 };

/** Backoff before retry number `attempt` (0-based): base·2^attempt capped at max, times a jitter in [0.5, 1). */
export function backoffDelay(attempt: number, options: BackoffOptions, random: () => number): number {
  const ceiling = Math.min(options.maxMs, options.baseMs * 2 ** attempt);
  return Math.round(ceiling * (0.5 + 0.5 * random()));
}

/** Retry-After in milliseconds, or null when absent or unreadable. */
export function parseRetryAfter(header: string | null, nowMs: number = Date.now()): number | null {
  if (header === null || header.trim() === '') return null;
  const text = header.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - nowMs);
}

/** HTTP statuses worth retrying: timeouts, conflicts from overloaded proxies, rate limits, server errors. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 425 || status === 429 || status >= 500;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
