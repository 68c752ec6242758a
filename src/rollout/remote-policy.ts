/**
 * A policy served by any OpenAI-compatible `/v1/chat/completions` endpoint (vLLM, llama.cpp, OpenAI,
 * OpenRouter…), used to collect trajectories from a large model for SFT data. Text only: no tokenizer,
 * no per-token logprobs, so its trajectories train SFT, not GRPO.
 *
 * Tools stay in the Hermes text convention (the `<tools>` block in the system prompt, `<tool_call>` in
 * the reply), so the same parser reads every policy. Spindle's `tool` turns are sent as `user` turns
 * holding `<tool_response>` blocks (Qwen's template does the same; OpenAI's `tool` role would need
 * native call ids). If a server answers with native `tool_calls` anyway, they are turned into
 * `<tool_call>` text.
 */
import type { ChatMessage } from '../contracts.ts';
import type { GenerateOptions, Policy, PolicyContext, PolicyTurn } from './policy.ts';

export interface RemotePolicyOptions {
  /** Endpoint root including the version, e.g. `http://127.0.0.1:8000/v1`. */
  baseUrl: string;
  model: string;
  /** Sent as `Authorization: Bearer …` when set. Never stored in configs or trajectories. */
  apiKey?: string | null;
  /** Overrides the episode's sampling temperature when set. */
  temperature?: number;
  /** Per request. Default 60 s. */
  timeoutMs?: number;
  /** Extra body fields (e.g. `{ "chat_template_kwargs": … }`). */
  extraBody?: Record<string, unknown>;
  /** Injected for tests or proxies; default global fetch. */
  fetch?: typeof fetch;
}

interface CompletionResponse {
  choices?: {
    message?: { content?: string | null; tool_calls?: { function?: { name?: string; arguments?: string } }[] };
    finish_reason?: string | null;
  }[];
}

export class RemotePolicy implements Policy {
  readonly id: string;
  readonly tokenizer = null;
  private readonly url: string;

  constructor(private readonly options: RemotePolicyOptions) {
    if (!/^https?:\/\//.test(options.baseUrl))
      throw new Error(`RemotePolicy: baseUrl must start with http:// or https:// (got "${options.baseUrl}")`);
    if (!options.model)
      throw new Error(
        'RemotePolicy: model is required (the name the endpoint serves, e.g. "Qwen/Qwen2.5-7B-Instruct")',
      );
    this.url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
    this.id = `remote:${options.model}`;
  }

  async generate(context: PolicyContext, options: GenerateOptions): Promise<PolicyTurn> {
    const body = {
      model: this.options.model,
      messages: context.messages.map(toWireMessage),
      temperature: this.options.temperature ?? options.sampling.temperature,
      top_p: options.sampling.top_p,
      max_tokens: options.sampling.max_new_tokens,
      seed: options.seed,
      ...this.options.extraBody,
    };
    const timeoutMs = this.options.timeoutMs ?? 60_000;
    const signals = [AbortSignal.timeout(timeoutMs), ...(options.signal ? [options.signal] : [])];
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;

    let response: Response;
    try {
      response = await (this.options.fetch ?? fetch)(this.url, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: AbortSignal.any(signals),
      });
    } catch (error) {
      options.signal?.throwIfAborted();
      const reason =
        error instanceof Error && error.name === 'TimeoutError'
          ? `no reply within ${timeoutMs} ms`
          : String(error instanceof Error ? error.message : error);
      throw new Error(`RemotePolicy: POST ${this.url} failed: ${reason}`, { cause: error });
    }
    const raw = await response.text();
    if (!response.ok)
      throw new Error(
        `RemotePolicy: POST ${this.url} → ${response.status} ${response.statusText}: ${raw.slice(0, 300)}`,
      );
    let parsed: CompletionResponse;
    try {
      parsed = JSON.parse(raw) as CompletionResponse;
    } catch {
      throw new Error(`RemotePolicy: ${this.url} did not return JSON: ${raw.slice(0, 200)}`);
    }
    const choice = parsed.choices?.[0];
    if (!choice?.message)
      throw new Error(`RemotePolicy: reply from ${this.url} has no choices[0].message: ${raw.slice(0, 200)}`);
    const text = withNativeCalls(choice.message.content ?? '', choice.message.tool_calls ?? []);
    options.onText?.(text);
    return { text, tokens: [], logprobs: [], finish_reason: choice.finish_reason === 'length' ? 'length' : 'stop' };
  }
}

/** OpenAI roles: a Spindle `tool` turn becomes a `user` turn (its content already holds `<tool_response>` blocks). */
function toWireMessage(message: ChatMessage): { role: string; content: string } {
  return { role: message.role === 'tool' ? 'user' : message.role, content: message.content };
}

function withNativeCalls(content: string, calls: { function?: { name?: string; arguments?: string } }[]): string {
  const blocks = calls
    .filter((c) => c.function?.name)
    .map(
      (c) =>
        `<tool_call>{"name":${JSON.stringify(c.function!.name)},"arguments":${c.function!.arguments?.trim() || '{}'}}</tool_call>`,
    );
  return [content.trim(), ...blocks].filter(Boolean).join('\n');
}
