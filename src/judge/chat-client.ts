/**
 * The HTTP side every LLM judge over an OpenAI-compatible `/v1/chat/completions` endpoint shares (the
 * remote rubric judge, the criteria rubric judge, the group judge): one request with a timeout, retries
 * with exponential backoff and jitter on 429/5xx, timeouts and network errors (honouring Retry-After), a
 * concurrency limit shared by every call on this client, token and cost accounting, and the response
 * cache keyed by (judge id, model, prompt). What a reply means is the judge's business: it hands `chat`
 * a prompt and reads the text that comes back.
 *
 * The API key lives in a private field, goes only into the Authorization header, and is scrubbed from
 * every text the client returns (`redact`; a server may echo it back in an error body).
 */
import { judgeCacheKey, MemoryJudgeCache, type JudgeCache } from './cache.ts';
import { ConcurrencyLimiter } from './limiter.ts';
import {
  backoffDelay,
  DEFAULT_BACKOFF,
  isRetryableStatus,
  parseRetryAfter,
  sleep,
  type BackoffOptions,
} from './retry.ts';
import { errorMessage, type JudgeCost } from './types.ts';
import { MiB, NetError, readText } from '../net.ts';

/** The most a judge's reply may be. */
const MAX_REPLY_BYTES = 8 * MiB;

export interface Pricing {
  /** USD per 1,000 prompt tokens. */
  prompt_usd_per_1k: number;
  /** USD per 1,000 completion tokens. */
  completion_usd_per_1k: number;
}

export interface ChatClientOptions {
  /** The judge's id: part of the cache key and of error messages. */
  id: string;
  /** Up to and including the version, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8000/v1`. */
  baseUrl: string;
  model: string;
  apiKey?: string | null;
  temperature?: number;
  /** Per attempt, including reading the body. */
  timeoutMs?: number;
  maxConcurrency?: number;
  /** Retries after the first attempt. */
  maxRetries?: number;
  maxTokens?: number;
  backoff?: Partial<BackoffOptions>;
  pricing?: Pricing;
  /** `false` turns caching off; default a fresh in-memory cache. */
  cache?: JudgeCache | false;
  /** Injection points for tests. */
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

export interface ChatUsage {
  requests: number;
  retries: number;
  cache_hits: number;
  prompt_tokens: number;
  completion_tokens: number;
  usd: number;
}

/** A chat's outcome: the reply text and what it cost, or why there is none after every retry. */
export type ChatOutcome =
  | {
      ok: true;
      content: string;
      cost: JudgeCost;
      /** The retries it took, as text for a rationale ('' when none). */ retried: string;
    }
  | { ok: false; reason: string };

/** One attempt's outcome: a reply, or a failure that may be retried after `retryAfterMs`. */
type Attempt =
  | { kind: 'done'; content: string; promptTokens: number; completionTokens: number }
  | { kind: 'retry'; reason: string; retryAfterMs: number | null }
  | { kind: 'fail'; reason: string };

interface ChatCompletion {
  choices?: { message?: { content?: unknown } }[];
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown };
}

export class ChatClient {
  readonly id: string;
  readonly model: string;
  readonly baseUrl: string;
  readonly #apiKey: string | null;
  readonly settings: { temperature: number; timeoutMs: number; maxRetries: number; maxTokens: number };
  /** The response cache (null: off). Judges decide what is worth caching: only scored results. */
  readonly cache: JudgeCache | null;
  private readonly backoff: BackoffOptions;
  private readonly limiter: ConcurrencyLimiter;
  private readonly pricing: Pricing;
  private readonly fetchFn: typeof fetch;
  private readonly sleepFn: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly totals: ChatUsage = {
    requests: 0,
    retries: 0,
    cache_hits: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    usd: 0,
  };

  /** `kind` names the judge in error messages ("RemoteJudge", "RubricJudge", …). */
  constructor(options: ChatClientOptions, kind = 'RemoteJudge') {
    if (!/^https?:\/\//.test(options.baseUrl))
      throw new Error(
        `${kind} "${options.id}": baseUrl must start with http:// or https://, got "${options.baseUrl}".`,
      );
    if (!options.model) throw new Error(`${kind} "${options.id}": model is required (e.g. "gpt-4o-mini").`);
    this.id = options.id;
    this.model = options.model;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#apiKey = options.apiKey || null;
    this.settings = {
      temperature: options.temperature ?? 0,
      timeoutMs: options.timeoutMs ?? 60_000,
      maxRetries: options.maxRetries ?? 3,
      maxTokens: options.maxTokens ?? 400,
    };
    this.backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.limiter = new ConcurrencyLimiter(options.maxConcurrency ?? 4);
    this.cache = options.cache === false ? null : (options.cache ?? new MemoryJudgeCache());
    this.pricing = options.pricing ?? { prompt_usd_per_1k: 0, completion_usd_per_1k: 0 };
    this.fetchFn = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.sleepFn = options.sleep ?? sleep;
    this.random = options.random ?? Math.random;
  }

  /** Totals since this client was made: requests, retries, cache hits, tokens, dollars. */
  usage(): ChatUsage {
    return { ...this.totals };
  }

  /** What a serialised judge may show of its client: never the key. */
  toJSON(): Record<string, unknown> {
    return { id: this.id, model: this.model, baseUrl: this.baseUrl, ...this.settings };
  }

  /** The cache key of a prompt for this judge and model. */
  cacheKey(prompt: string): Promise<string> {
    return judgeCacheKey(this.id, this.model, prompt);
  }

  /** Counts a reply served from the cache (the judge looked it up). */
  countCacheHit(): void {
    this.totals.cache_hits++;
  }

  /** One chat (system + user message) under the concurrency limit, retried as the header says. */
  chat(system: string, prompt: string): Promise<ChatOutcome> {
    return this.limiter.run(() => this.request(system, prompt));
  }

  /** Removes the API key from any text before it leaves a judge. */
  redact(text: string): string {
    return this.#apiKey ? text.split(this.#apiKey).join('[redacted]') : text;
  }

  private async request(system: string, prompt: string): Promise<ChatOutcome> {
    const reasons: string[] = [];
    for (let attempt = 0; ; attempt++) {
      this.totals.requests++;
      const outcome = await this.attempt(system, prompt);
      if (outcome.kind === 'done') {
        const usd =
          (outcome.promptTokens * this.pricing.prompt_usd_per_1k +
            outcome.completionTokens * this.pricing.completion_usd_per_1k) /
          1000;
        this.totals.prompt_tokens += outcome.promptTokens;
        this.totals.completion_tokens += outcome.completionTokens;
        this.totals.usd += usd;
        const retried = reasons.length
          ? ` (after ${reasons.length} retr${reasons.length === 1 ? 'y' : 'ies'}: ${reasons.join('; ')})`
          : '';
        return {
          ok: true,
          content: outcome.content,
          cost: { prompt_tokens: outcome.promptTokens, completion_tokens: outcome.completionTokens, usd },
          retried: this.redact(retried),
        };
      }
      reasons.push(outcome.reason);
      if (outcome.kind === 'fail' || attempt >= this.settings.maxRetries) {
        const tries = attempt + 1;
        return {
          ok: false,
          reason: this.redact(
            `remote judge ${this.model} gave no score after ${tries} attempt${tries === 1 ? '' : 's'}: ${reasons.join('; ')}`,
          ),
        };
      }
      this.totals.retries++;
      const wait =
        outcome.retryAfterMs !== null
          ? Math.min(outcome.retryAfterMs, this.backoff.maxRetryAfterMs)
          : backoffDelay(attempt, this.backoff, this.random);
      await this.sleepFn(wait);
    }
  }

  private async attempt(system: string, prompt: string): Promise<Attempt> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.settings.timeoutMs);
    try {
      const headers: Record<string, string> = { 'Content-Type': 'application/json' };
      if (this.#apiKey) headers.Authorization = `Bearer ${this.#apiKey}`;
      const response = await this.fetchFn(`${this.baseUrl}/chat/completions`, {
        method: 'POST',
        headers,
        signal: controller.signal,
        body: JSON.stringify({
          model: this.model,
          temperature: this.settings.temperature,
          max_tokens: this.settings.maxTokens,
          messages: [
            { role: 'system', content: system },
            { role: 'user', content: prompt },
          ],
        }),
      });
      // A reply is a few kilobytes; a server that sends more is refused, not held in memory (the timer above bounds the time).
      const text = await readText(response, controller, `${this.baseUrl}/chat/completions`, {
        connectTimeoutMs: this.settings.timeoutMs,
        idleTimeoutMs: this.settings.timeoutMs,
        minWindowBytes: 1,
        maxBytes: MAX_REPLY_BYTES,
      });
      if (!response.ok) {
        const reason = `HTTP ${response.status}${text ? `: ${snippet(text)}` : ''}`;
        if (isRetryableStatus(response.status))
          return { kind: 'retry', reason, retryAfterMs: parseRetryAfter(response.headers.get('retry-after')) };
        return { kind: 'fail', reason };
      }
      return readCompletion(text, system.length + prompt.length);
    } catch (err) {
      if (err instanceof NetError && err.kind === 'too-big')
        return {
          kind: 'fail',
          reason: `the reply is larger than ${MAX_REPLY_BYTES / MiB} MiB; a chat completion is a few kilobytes`,
        };
      if (controller.signal.aborted)
        return { kind: 'retry', reason: `timed out after ${this.settings.timeoutMs} ms`, retryAfterMs: null };
      return { kind: 'retry', reason: `network error: ${errorMessage(err)}`, retryAfterMs: null };
    } finally {
      clearTimeout(timer);
    }
  }
}

function readCompletion(text: string, promptChars: number): Attempt {
  let body: ChatCompletion;
  try {
    body = JSON.parse(text) as ChatCompletion;
  } catch {
    return { kind: 'fail', reason: `response is not JSON: ${snippet(text)}` };
  }
  const choice = Array.isArray(body.choices) ? body.choices[0] : undefined;
  if (!choice) return { kind: 'fail', reason: 'response has no choices' };
  const content = choice.message?.content;
  if (typeof content !== 'string') return { kind: 'fail', reason: 'the first choice has no message content' };
  const usage = body.usage ?? {};
  // Servers that omit usage still cost something: estimate ~4 characters per token.
  const promptTokens = typeof usage.prompt_tokens === 'number' ? usage.prompt_tokens : Math.ceil(promptChars / 4);
  const completionTokens =
    typeof usage.completion_tokens === 'number' ? usage.completion_tokens : Math.ceil(content.length / 4);
  return { kind: 'done', content, promptTokens, completionTokens };
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat;
}

/** The ChatClient options of a run config's endpoint fields (remote, rubric and group judges share them). */
export interface EndpointConfig {
  id: string;
  base_url: string;
  model: string;
  temperature: number;
  timeout_ms: number;
  max_concurrency: number;
  max_retries: number;
}

export function endpointOptions(
  c: EndpointConfig,
  apiKey: string | null,
  extra: { cache?: JudgeCache; pricing?: Pricing } = {},
): ChatClientOptions {
  return {
    id: c.id,
    baseUrl: c.base_url,
    model: c.model,
    apiKey,
    temperature: c.temperature,
    timeoutMs: c.timeout_ms,
    maxConcurrency: c.max_concurrency,
    maxRetries: c.max_retries,
    cache: extra.cache,
    pricing: extra.pricing,
  };
}
