/**
 * A model's own chat template (`chat_template` in tokenizer_config.json), rendered with a real Jinja
 * implementation (@huggingface/jinja, the one transformers.js uses), with the same turn-by-turn pieces
 * as chatml.ts so an agent loop can build token ids without re-rendering what the policy sampled:
 *
 *   prompt   = template.prompt(messages, tools)                 // ends with the template's generation prompt
 *   sampled  = the policy's text (its stop token included when it stopped on one)
 *   next     = template.turnClose(stopText) + template.continuation(messagesSoFar, [toolMessage], tools)
 *
 * Only `sampled` is policy text; `next` is prompt text, so a training mask over the sampled tokens covers
 * exactly the assistant's tokens. What the template does with tools is probed once (template-probe.ts):
 * a template that renders calls in a format Spindle reads (Hermes `<tool_call>` for Qwen2.5 and Qwen3,
 * Llama 3.1's JSON, Mistral's `[TOOL_CALLS]`, and the other families of tool-call-codec.ts) gets the calls
 * as `tool_calls` with bare `tool` results (openai-messages.ts) and, when it lists tools, the tools in
 * `tools`; the model family's codec reads the calls back. A template that lists tools and takes the
 * calls in the assistant's text (SmolLM3's) gets the tools and every message as written. Any other
 * template gets Spindle's Hermes text as it is, tools listed in the system prompt by the caller; one
 * that drops calls altogether is refused for tools by the caller (conversation.ts).
 */
import { Environment, Template } from '@huggingface/jinja';
import type { ChatMessage, ToolSchema } from '../contracts.ts';
import { toOpenAiMessages, type OpenAiMessage } from './openai-messages.ts';
import { probeToolSupport, type TemplateToolSupport } from './template-probe.ts';
import { BudgetedInterpreter, budgetedRange, RENDER_BUDGET, RenderBudgetError } from './template-budget.ts';

export interface TemplateTokens {
  bos_token?: string;
  eos_token?: string;
}

export interface TemplateOptions {
  /** Whether the tokenizer has this special token (`<tool_call>`, `<|python_tag|>`): decides the call format when the template does not show it. */
  hasToken?: (token: string) => boolean;
  /** Which file the template came from, for error messages (`chat_template.jinja`, `tokenizer_config.json`). */
  origin?: string;
}

/** Stands in for an assistant's content to find where the template closes the turn. */
const SENTINEL = '\u0000spindle-assistant-content\u0000';

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** The globals @huggingface/jinja gives a template, with `range` on the render's budget and English month names on every machine. */
function jinjaGlobals(deadline: number): Record<string, unknown> {
  const pad2 = (n: number) => String(n).padStart(2, '0');
  const strftimeNow = (format: string) => {
    const d = new Date();
    const parts: Record<string, string> = {
      '%Y': String(d.getFullYear()),
      '%m': pad2(d.getMonth() + 1),
      '%d': pad2(d.getDate()),
      '%b': MONTHS[d.getMonth()].slice(0, 3),
      '%B': MONTHS[d.getMonth()],
      '%H': pad2(d.getHours()),
      '%M': pad2(d.getMinutes()),
      '%%': '%',
    };
    return String(format).replace(/%[YmdbBHM%]/g, (token) => parts[token]);
  };
  return {
    false: false,
    true: true,
    none: null,
    False: false,
    True: true,
    None: null,
    raise_exception: (message: unknown) => {
      throw new Error(String(message));
    },
    range: budgetedRange(deadline),
    strftime_now: strftimeNow,
  };
}

export class ChatTemplate {
  /** What the template does with tools and which call format the model writes (template-probe.ts). */
  readonly toolSupport: TemplateToolSupport;
  private readonly template: Template;
  private readonly close: string;

  constructor(
    readonly source: string,
    private readonly tokens: TemplateTokens = {},
    opts: TemplateOptions = {},
  ) {
    const origin = opts.origin ? ` (${opts.origin})` : '';
    try {
      this.template = new Template(source);
    } catch (err) {
      throw new Error(`chat_template does not parse as Jinja${origin}: ${(err as Error).message}`, { cause: err });
    }
    this.toolSupport = probeToolSupport(
      (messages, o) => this.renderObjects(messages, o.tools, o.addGenerationPrompt ?? false),
      opts.hasToken ?? (() => false),
      (err) => err instanceof RenderBudgetError,
    );
    const probe = this.render(
      [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: SENTINEL },
      ],
      { addGenerationPrompt: false },
    );
    const at = probe.lastIndexOf(SENTINEL);
    if (at < 0)
      throw new Error(
        `chat_template${origin} drops the assistant message content; Spindle needs the sampled text to appear in the conversation.`,
      );
    this.close = probe.slice(at + SENTINEL.length);
  }

  /**
   * The template lists the tools it is given and renders calls in a format Spindle reads (as `tool_calls`,
   * or in the assistant's text): tools go to it, not into Spindle's system prompt.
   */
  get supportsTools(): boolean {
    const { listsTools, rendersCalls, codec } = this.toolSupport;
    return listsTools && rendersCalls && !codec.fallback;
  }

  /** Calls go to the template as `tool_calls` and results as bare `tool` messages (else the text goes as written). */
  get liftsCalls(): boolean {
    return (
      this.toolSupport.rendersCalls && this.toolSupport.callsAs === 'tool_calls' && !this.toolSupport.codec.fallback
    );
  }

  /**
   * The template from a parsed tokenizer_config.json, or null when it has none. A list of named
   * templates (`[{name, template}]`) uses the "tool_use" one when tools are wanted, else "default".
   * Without `hasToken`, the special tokens are those the config's `added_tokens_decoder` lists.
   */
  static fromTokenizerConfig(
    config: Record<string, unknown>,
    opts: { tools?: boolean } & TemplateOptions = {},
  ): ChatTemplate | null {
    let source = config.chat_template;
    if (Array.isArray(source)) {
      const named = source as { name?: string; template?: string }[];
      source =
        (opts.tools ? named.find((t) => t.name === 'tool_use') : undefined)?.template ??
        named.find((t) => t.name === 'default')?.template;
    }
    if (source == null) return null;
    if (typeof source !== 'string')
      throw new Error('tokenizer_config.json: chat_template must be a string or a list of {name, template}.');
    const token = (v: unknown) =>
      typeof v === 'string' ? v : ((v as { content?: string } | null)?.content ?? undefined);
    const listed = new Set(Object.values((config.added_tokens_decoder ?? {}) as Record<string, unknown>).map(token));
    return new ChatTemplate(
      source,
      { bos_token: token(config.bos_token), eos_token: token(config.eos_token) },
      { hasToken: opts.hasToken ?? ((t) => listed.has(t)), origin: opts.origin },
    );
  }

  /** The whole conversation as the template renders it, within the render budget (see RENDER_BUDGET). */
  render(messages: ChatMessage[], opts: { tools?: ToolSchema[]; addGenerationPrompt?: boolean } = {}): string {
    const tools =
      opts.tools?.length && this.supportsTools
        ? opts.tools.map((fn) => ({ type: 'function', function: fn }))
        : undefined;
    const inputChars = messages.reduce((n, m) => n + m.content.length, 0);
    if (inputChars > RENDER_BUDGET.inputChars) {
      throw new Error(
        `chat_template: the conversation is ${inputChars} characters, above the ${RENDER_BUDGET.inputChars} a render accepts; no model context holds it`,
      );
    }
    const support = this.toolSupport;
    const shaped = this.liftsCalls
      ? toOpenAiMessages(messages, { codec: support.codec, reasoning: support.readsReasoning })
      : messages;
    return this.renderObjects(shaped as unknown as Record<string, unknown>[], tools, opts.addGenerationPrompt ?? false);
  }

  /** Template-ready messages and tools, rendered through our globals within the budget. */
  private renderObjects(
    messages: Record<string, unknown>[],
    tools: object[] | undefined,
    addGenerationPrompt: boolean,
  ): string {
    let text: string;
    try {
      // Template.render with our globals: its own `range` has no budget and cannot be replaced in it.
      const deadline = Date.now() + RENDER_BUDGET.deadlineMs;
      const env = new Environment();
      for (const [name, value] of Object.entries({
        ...jinjaGlobals(deadline),
        messages,
        ...(tools ? { tools } : {}),
        add_generation_prompt: addGenerationPrompt,
        bos_token: this.tokens.bos_token ?? '',
        eos_token: this.tokens.eos_token ?? '',
      }))
        env.set(name, value);
      text = new BudgetedInterpreter(env, deadline).run(this.template.parsed).value as string;
    } catch (err) {
      const Failure = err instanceof RenderBudgetError ? RenderBudgetError : Error;
      throw new Failure(`chat_template failed to render: ${(err as Error).message}`, { cause: err });
    }
    if (text.length > RENDER_BUDGET.outputChars)
      throw new RenderBudgetError(
        `chat_template rendered ${text.length} characters, above the ${RENDER_BUDGET.outputChars} allowed: the template blows its input up`,
      );
    return text;
  }

  /**
   * OpenAI-form messages (`tool_calls`, one `tool` message per result: a chat JSONL row) and tools rendered
   * as transformers' `apply_chat_template(messages, tools=tools)` renders them: as given, no generation
   * prompt, within the render budget.
   */
  applyChatTemplate(messages: OpenAiMessage[], tools: object[] = []): string {
    return this.renderObjects(
      messages as unknown as Record<string, unknown>[],
      tools.length ? tools : undefined,
      false,
    );
  }

  /** What the policy continues from. */
  prompt(messages: ChatMessage[], tools: ToolSchema[] = []): string {
    return this.render(messages, { tools, addGenerationPrompt: true });
  }

  /**
   * An assistant message as the template writes it after `before` (calls in the template's own form),
   * without the turn's close: the text a model of this template samples for it, so training on it
   * matches what `apply_chat_template` gives. The message as stored when the render does not split there.
   */
  assistantText(before: ChatMessage[], message: ChatMessage, tools: ToolSchema[] = []): string {
    const head = this.prompt(before, tools);
    const full = this.render([...before, message], { tools });
    if (!full.startsWith(head) || !full.endsWith(this.close)) return message.content;
    return full.slice(head.length, full.length - this.close.length);
  }

  /**
   * Prompt text that closes an assistant turn after its sampled text: the template's end of turn
   * (`<|im_end|>\n`, `<|eot_id|>`), less the stop token the policy already sampled.
   */
  turnClose(sampledStop: string | null): string {
    return sampledStop && this.close.startsWith(sampledStop) ? this.close.slice(sampledStop.length) : this.close;
  }

  /**
   * The text `added` messages (tool results, a user reply) contribute after `before` (which ends with
   * the assistant turn just sampled), plus the next generation prompt: what the template renders after
   * that assistant turn's close. Templates may render the last assistant turn differently once messages
   * follow it (Qwen3 drops an empty think block); that is fine, since the sampled tokens stand as
   * sampled. Any change to an earlier turn is refused: the conversation could not be extended turn by turn.
   */
  continuation(
    before: ChatMessage[],
    added: ChatMessage[],
    tools: ToolSchema[] = [],
    opts: { addGenerationPrompt?: boolean } = {},
  ): string {
    const head = this.render(before, { tools });
    const full = this.render([...before, ...added], { tools, addGenerationPrompt: opts.addGenerationPrompt ?? true });
    if (full.startsWith(head)) return full.slice(head.length);
    let same = 0;
    while (same < head.length && head[same] === full[same]) same++;
    const earlier = this.render(before.slice(0, -1), { tools });
    const closeAt = full.indexOf(this.close, same);
    if (!head.startsWith(earlier) || same < earlier.length || closeAt < 0 || this.close === '') {
      throw new Error(
        'chat_template renders earlier turns differently once later messages follow; Spindle cannot extend such a conversation turn by turn.',
      );
    }
    return full.slice(closeAt + this.close.length);
  }
}
