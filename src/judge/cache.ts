/**
 * The response cache for judges that cost money or time: keyed by (judge id, model, prompt), so judging
 * the same trajectory again is free. In memory, with an optional persistence hook (IndexedDB, a file)
 * that sees each new entry and can pre-load old ones. Only scored results are cached: a failure should be
 * retried next time, not remembered.
 */
import type { JudgeResult } from './types.ts';

export interface CachedJudgement {
  result: JudgeResult;
  /** A group judge's results, one per trajectory of the group (then `result` sums the call up). */
  results?: JudgeResult[];
  prompt_tokens: number;
  completion_tokens: number;
}

export interface JudgeCache {
  get(key: string): CachedJudgement | undefined | Promise<CachedJudgement | undefined>;
  set(key: string, value: CachedJudgement): void | Promise<void>;
}

export interface MemoryJudgeCacheOptions {
  /** Entries saved earlier (e.g. read back from IndexedDB). */
  entries?: Iterable<[string, CachedJudgement]>;
  /** Called with each new entry, to save it; errors are the caller's to handle. */
  persist?: (key: string, value: CachedJudgement) => void | Promise<void>;
}

export class MemoryJudgeCache implements JudgeCache {
  private readonly map: Map<string, CachedJudgement>;
  private readonly persist?: MemoryJudgeCacheOptions['persist'];

  constructor(options: MemoryJudgeCacheOptions = {}) {
    this.map = new Map(options.entries ?? []);
    this.persist = options.persist;
  }

  get size(): number {
    return this.map.size;
  }

  get(key: string): CachedJudgement | undefined {
    const hit = this.map.get(key);
    return hit && structuredClone(hit);
  }

  async set(key: string, value: CachedJudgement): Promise<void> {
    this.map.set(key, structuredClone(value));
    if (this.persist) await this.persist(key, structuredClone(value));
  }

  entries(): [string, CachedJudgement][] {
    return [...this.map.entries()].map(([k, v]) => [k, structuredClone(v)]);
  }
}

/** SHA-256 hex of (judge id, model, prompt): a short key that is safe to store and never holds a secret. */
export async function judgeCacheKey(judgeId: string, model: string, prompt: string): Promise<string> {
  const bytes = new TextEncoder().encode(JSON.stringify([judgeId, model, prompt]));
  const digest = await globalThis.crypto.subtle.digest('SHA-256', bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}
