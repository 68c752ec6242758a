/**
 * Remote LLM judge over the OpenAI-compatible `/v1/chat/completions` API (OpenAI, OpenRouter, vLLM,
 * Ollama, llama.cpp server). It sends the seed's rubric prompt and parses the reply with
 * `parseRubricScore`.
 *
 * Robustness: retries with exponential backoff and jitter on 429/5xx, timeouts and network errors,
 * honouring Retry-After; a concurrency limit shared by every call on this instance; a response cache keyed
 * by (judge id, model, prompt); token and cost accounting. Anything that still fails is a null result
 * with the reason.
 *
 * The API key lives in a private field, goes only into the Authorization header, and is scrubbed from
 * every text this judge returns (a server may echo it back in an error body).
 */
import type { Task, Trajectory } from '../contracts.ts';
import { judgeCacheKey, MemoryJudgeCache, type JudgeCache } from './cache.ts';
import { ConcurrencyLimiter } from './limiter.ts';
import { parseRubricScore } from './parse-score.ts';
import { buildRubricPrompt, RUBRIC_SYSTEM_PROMPT, type RenderOptions } from './render.ts';
import { backoffDelay, DEFAULT_BACKOFF, isRetryableStatus, parseRetryAfter, sleep, type BackoffOptions } from './retry.ts';
import { errorMessage, noScore, type Judge, type JudgeResult } from './types.ts';

export interface Pricing {
  /** USD per 1,000 prompt tokens. */
  prompt_usd_per_1k: number;
  /** USD per 1,000 completion tokens. */
  completion_usd_per_1k: number;
}

export interface RemoteJudgeOptions {
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
  render?: RenderOptions;
  /** Injection points for tests. */
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

export interface RemoteJudgeUsage {
  requests: number;
  retries: number;
  cache_hits: number;
  prompt_tokens: number;
  completion_tokens: number;
  usd: number;
}

/** One attempt's outcome: a parsed result, or a failure that may be retried after `retryAfterMs`. */
type Attempt =
  | { kind: 'done'; result: JudgeResult; promptTokens: number; completionTokens: number }
  | { kind: 'retry'; reason: string; retryAfterMs: number | null }
  | { kind: 'fail'; reason: string };

interface ChatCompletion {
  choices?: { message?: { content?: unknown } }[];
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown };
}

export class RemoteJudge implements Judge {
  readonly id: string;
  readonly model: string;
  readonly baseUrl: string;
  readonly #apiKey: string | null;
  private readonly options: Required<Pick<RemoteJudgeOptions, 'temperature' | 'timeoutMs' | 'maxRetries' | 'maxTokens'>>;
  private readonly backoff: BackoffOptions;
  private readonly limiter: ConcurrencyLimiter;
  private readonly cache: JudgeCache | null;
  private readonly pricing: Pricing;
  private readonly fetchFn: typeof fetch;
  private readonly sleepFn: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly renderOptions: RenderOptions;
  private readonly totals: RemoteJudgeUsage = { requests: 0, retries: 0, cache_hits: 0, prompt_tokens: 0, completion_tokens: 0, usd: 0 };

  constructor(options: RemoteJudgeOptions) {
    if (!/^https?:\/\//.test(options.baseUrl)) throw new Error(`RemoteJudge "${options.id}": baseUrl must start with http:// or https://, got "${options.baseUrl}".`);
    if (!options.model) throw new Error(`RemoteJudge "${options.id}": model is required (e.g. "gpt-4o-mini").`);
    this.id = options.id;
    this.model = options.model;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#apiKey = options.apiKey || null;
    this.options = {
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
    this.renderOptions = options.render ?? {};
  }

  /** Totals since this judge was made: requests, retries, cache hits, tokens, dollars. */
  usage(): RemoteJudgeUsage {
    return { ...this.totals };
  }

  /** No own enumerable field holds the key, but say so explicitly for anything that serialises a judge. */
  toJSON(): Record<string, unknown> {
    return { id: this.id, model: this.model, baseUrl: this.baseUrl, ...this.options };
  }

  async score(trajectory: Trajectory, task: Task): Promise<JudgeResult> {
    const prompt = buildRubricPrompt(trajectory, task.prompt, this.renderOptions);
    const key = await judgeCacheKey(this.id, this.model, prompt);
    const hit = this.cache ? await this.cache.get(key) : undefined;
    if (hit) {
      this.totals.cache_hits++;
      return { ...hit.result, cost: { prompt_tokens: 0, completion_tokens: 0, usd: 0 } };
    }
    const result = await this.limiter.run(() => this.request(prompt));
    if (result.score !== null && this.cache) {
      const { cost, ...rest } = result;
      await this.cache.set(key, { result: rest, prompt_tokens: cost?.prompt_tokens ?? 0, completion_tokens: cost?.completion_tokens ?? 0 });
    }
    return result;
  }

  private async request(prompt: string): Promise<JudgeResult> {
    const reasons: string[] = [];
    for (let attempt = 0; ; attempt++) {
      this.totals.requests++;
      const outcome = await this.attempt(prompt);
      if (outcome.kind === 'done') {
        const usd = (outcome.promptTokens * this.pricing.prompt_usd_per_1k + outcome.completionTokens * this.pricing.completion_usd_per_1k) / 1000;
        this.totals.prompt_tokens += outcome.promptTokens;
        this.totals.completion_tokens += outcome.completionTokens;
        this.totals.usd += usd;
        const cost = { prompt_tokens: outcome.promptTokens, completion_tokens: outcome.completionTokens, usd };
        const r = outcome.result;
        const retried = reasons.length ? ` (after ${reasons.length} retr${reasons.length === 1 ? 'y' : 'ies'}: ${reasons.join('; ')})` : '';
        return { ...r, rationale: this.redact(r.rationale + retried), cost };
      }
      reasons.push(outcome.reason);
      if (outcome.kind === 'fail' || attempt >= this.options.maxRetries) {
        const tries = attempt + 1;
        return noScore(this.redact(`remote judge ${this.model} gave no score after ${tries} attempt${tries === 1 ? '' : 's'}: ${reasons.join('; ')}`));
      }
      this.totals.retries++;
      const wait = outcome.retryAfterMs !== null
        ? Math.min(outcome.retryAfterMs, this.backoff.maxRetryAfterMs)
        : backoffDelay(attempt, this.backoff, this.random);
      await this.sleepFn(wait);
    }
  }

  private async attempt(prompt: string): Promise<Attempt> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.options.timeoutMs);
    try {
      const headers: Record<string, string> = { 'Content-Type': 'application/json' };
      if (this.#apiKey) headers.Authorization = `Bearer ${this.#apiKey}`;
      const response = await this.fetchFn(`${this.baseUrl}/chat/completions`, {
        method: 'POST',
        headers,
        signal: controller.signal,
        body: JSON.stringify({
          model: this.model,
          temperature: this.options.temperature,
          max_tokens: this.options.maxTokens,
          messages: [
            { role: 'system', content: RUBRIC_SYSTEM_PROMPT },
            { role: 'user', content: prompt },
          ],
        }),
      });
      const text = await response.text();
      if (!response.ok) {
        const reason = `HTTP ${response.status}${text ? `: ${snippet(text)}` : ''}`;
        if (isRetryableStatus(response.status)) return { kind: 'retry', reason, retryAfterMs: parseRetryAfter(response.headers.get('retry-after')) };
        return { kind: 'fail', reason };
      }
      return this.readCompletion(text, prompt);
    } catch (err) {
      if (controller.signal.aborted) return { kind: 'retry', reason: `timed out after ${this.options.timeoutMs} ms`, retryAfterMs: null };
      return { kind: 'retry', reason: `network error: ${errorMessage(err)}`, retryAfterMs: null };
    } finally {
      clearTimeout(timer);
    }
  }

  private readCompletion(text: string, prompt: string): Attempt {
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
    const promptTokens = typeof usage.prompt_tokens === 'number' ? usage.prompt_tokens : Math.ceil((prompt.length + RUBRIC_SYSTEM_PROMPT.length) / 4);
    const completionTokens = typeof usage.completion_tokens === 'number' ? usage.completion_tokens : Math.ceil(content.length / 4);
    return { kind: 'done', result: parseRubricScore(content), promptTokens, completionTokens };
  }

  /** Removes the API key from any text before it leaves this object. */
  private redact(text: string): string {
    return this.#apiKey ? text.split(this.#apiKey).join('[redacted]') : text;
  }
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat;
}
