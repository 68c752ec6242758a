/**
 * Remote LLM judge over the OpenAI-compatible `/v1/chat/completions` API (OpenAI, OpenRouter, vLLM,
 * Ollama, llama.cpp server). It sends the rubric prompt (render.ts) and parses the reply with
 * `parseRubricScore`.
 *
 * Robustness (retries with backoff on 429/5xx, timeouts and network errors, Retry-After, a concurrency
 * limit, the response cache keyed by (judge id, model, prompt), token and cost accounting) is the shared
 * `ChatClient` (chat-client.ts), which the criteria rubric and group judges use too. Anything that still
 * fails is a null result with the reason.
 *
 * The API key lives only in the client's private field, goes only into the Authorization header, and is
 * scrubbed from every text this judge returns (a server may echo it back in an error body).
 */
import type { Task, Trajectory } from '../contracts.ts';
import { ChatClient, type ChatClientOptions, type ChatUsage } from './chat-client.ts';
import { parseRubricScore } from './parse-score.ts';
import { buildRubricPrompt, RUBRIC_SYSTEM_PROMPT, type RenderOptions } from './render.ts';
import { noScore, type Judge, type JudgeResult } from './types.ts';

export type { Pricing } from './chat-client.ts';

export interface RemoteJudgeOptions extends ChatClientOptions {
  render?: RenderOptions;
}

export type RemoteJudgeUsage = ChatUsage;

export class RemoteJudge implements Judge {
  readonly id: string;
  readonly model: string;
  readonly baseUrl: string;
  readonly #client: ChatClient;
  private readonly renderOptions: RenderOptions;

  constructor(options: RemoteJudgeOptions) {
    this.#client = new ChatClient(options, 'RemoteJudge');
    this.id = options.id;
    this.model = this.#client.model;
    this.baseUrl = this.#client.baseUrl;
    this.renderOptions = options.render ?? {};
  }

  /** Totals since this judge was made: requests, retries, cache hits, tokens, dollars. */
  usage(): RemoteJudgeUsage {
    return this.#client.usage();
  }

  /** No own enumerable field holds the key, but say so explicitly for anything that serialises a judge. */
  toJSON(): Record<string, unknown> {
    return this.#client.toJSON();
  }

  async score(trajectory: Trajectory, task: Task): Promise<JudgeResult> {
    // Verdict markers in the judged text are neutralised (neutralise.ts): an answer holding {"overall": 1} cannot vote for itself.
    const prompt = buildRubricPrompt(trajectory, task.prompt, this.renderOptions);
    return scoreWithClient(this.#client, RUBRIC_SYSTEM_PROMPT, prompt, parseRubricScore);
  }
}

/**
 * One judgement through a chat client: from the cache when this prompt was scored before (free), else a
 * chat whose reply `parse` reads. Only a scored result is cached: a failure is retried next time.
 */
export async function scoreWithClient(
  client: ChatClient,
  system: string,
  prompt: string,
  parse: (reply: string) => JudgeResult,
): Promise<JudgeResult> {
  const key = await client.cacheKey(prompt);
  const hit = client.cache ? await client.cache.get(key) : undefined;
  if (hit) {
    client.countCacheHit();
    return { ...hit.result, cost: { prompt_tokens: 0, completion_tokens: 0, usd: 0 } };
  }
  const outcome = await client.chat(system, prompt);
  if (!outcome.ok) return noScore(outcome.reason);
  const parsed = parse(outcome.content);
  const result: JudgeResult = {
    ...parsed,
    rationale: client.redact(parsed.rationale) + outcome.retried,
    cost: outcome.cost,
  };
  if (result.score !== null && client.cache) {
    const { cost, ...rest } = result;
    await client.cache.set(key, {
      result: rest,
      prompt_tokens: cost?.prompt_tokens ?? 0,
      completion_tokens: cost?.completion_tokens ?? 0,
    });
  }
  return result;
}
