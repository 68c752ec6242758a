/**
 * How the agent loop writes a conversation as prompt text, turn by turn: Spindle's ChatML (the shipped
 * base model, remote text policies) or a Hugging Face model's own chat template (chat-template.ts).
 *
 *   prompt(messages, tools)                → text the policy continues from (system + user + assistant header)
 *   turnClose(stop)                        → closes the assistant turn after the sampled text
 *   continuation(before, added, tools, …)  → the tool turn after it and, unless it is the last, the next header
 *   calls.parse(sampled)                   → the turn's thought, tool calls and answer, in the model family's format
 *
 * Only sampled text is policy text, so the assistant mask covers exactly the model's tokens either way.
 * `trainingTokens` assembles a finished conversation (SFT data) from the same pieces, so supervised
 * training sees the text and mask an episode of that model would have. The one chat codec: episodes
 * (rollout/episode.ts), SFT data (train/sft-data.ts) and the self-judge's prompt (judge/self.ts) all
 * write and read a model's turns through it.
 */
import type { ChatMessage, ToolSchema } from '../contracts.ts';
import type { TextTokenizer } from '../tokenizer/tokenizer.ts';
import { ChatTemplate } from './chat-template.ts';
import { IM_END, IM_START, assistantTurnClose, renderChatML, renderContinuation } from './chatml.ts';
import type { ToolCallCodec } from './codecs/codec.ts';
import { HERMES_CALLS } from './tool-call-codec.ts';
import { SPINDLE_CHAT_TEMPLATE } from '../tokenizer/spindle-chat-template.ts';

export interface ConversationFormat {
  /** The template lists the tools itself (from `tools`); the system prompt should not list them again. */
  readonly rendersTools: boolean;
  /** How the model writes tool calls: what reads them back from its sampled text. */
  readonly calls: ToolCallCodec;
  /**
   * Why tools cannot be used in this format (a template that drops tool calls), naming the model, what
   * was offered (`environment "arith_tool" offers calc`) and what to do; null when they can.
   */
  readonly toolRefusal: ((offered: string) => string) | null;
  prompt(messages: ChatMessage[], tools: ToolSchema[]): string;
  /** `stop`: the stop token's text when the policy sampled one (`<|im_end|>`, `<|eot_id|>`), else null. */
  turnClose(stop: string | null): string;
  continuation(
    before: ChatMessage[],
    added: ChatMessage[],
    tools: ToolSchema[],
    opts: { addGenerationPrompt: boolean },
  ): string;
  /** A stored assistant message as this format writes it (a template's own call form): what SFT trains on. */
  assistantText(before: ChatMessage[], message: ChatMessage, tools: ToolSchema[]): string;
  /** Renders the conversation so far: a template that raises on it (Llama's on two calls in one turn) does so here, before any tool runs. */
  check(messages: ChatMessage[], tools: ToolSchema[]): void;
}

const CHATML_FORMAT: ConversationFormat = {
  rendersTools: false,
  calls: HERMES_CALLS,
  toolRefusal: null,
  prompt: (messages) => renderChatML(messages, { addGenerationPrompt: true }),
  turnClose: (stop) => assistantTurnClose(stop === IM_END),
  continuation: (_before, added, _tools, { addGenerationPrompt }) =>
    addGenerationPrompt ? renderContinuation(added) : renderChatML(added),
  assistantText: (_before, message) => message.content,
  check: () => {},
};

function templateFormat(
  template: ChatTemplate,
  model: string,
  origin: string,
  chatMlTokens: boolean,
): ConversationFormat {
  const support = template.toolSupport;
  return {
    rendersTools: template.supportsTools,
    calls: support.codec,
    toolRefusal: support.rendersCalls ? null : (offered) => toolRefusal(model, offered, origin, chatMlTokens),
    prompt: (messages, tools) => template.prompt(messages, tools),
    turnClose: (stop) => template.turnClose(stop),
    continuation: (before, added, tools, opts) => template.continuation(before, added, tools, opts),
    assistantText: (before, message, tools) => template.assistantText(before, message, tools),
    check: (messages, tools) => void template.render(messages, { tools }),
  };
}

/**
 * A template that drops tool calls (SmolLM2's renders only each message's text) would have the model
 * trained on conversations its own template cannot write: refused for tools, with the ways out.
 */
function toolRefusal(model: string, offered: string, origin: string, chatMlTokens: boolean): string {
  const where =
    origin === 'chat_template.jinja'
      ? 'delete its chat_template.jinja'
      : 'remove chat_template from its tokenizer_config.json';
  const chatMl = chatMlTokens
    ? `, or ${where} so Spindle uses its own ChatML format with Hermes tool calls (its tokenizer has ${IM_START})`
    : '';
  return (
    `The chat template of ${model} cannot render tool calls, and ${offered}: the template drops an assistant turn's tool_calls ` +
    'or the tool results, so an episode with tools could not be stored and trained as the model saw it. Choose an environment ' +
    `without tools, or give the model a template that renders tools and tool_calls (save it as chat_template.jinja in its folder)${chatMl}.`
  );
}

/** Probing a template renders it several times: once per tokenizer is enough. */
const templateFormats = new WeakMap<object, ConversationFormat>();

/**
 * The format a policy's tokenizer calls for: a Hugging Face tokenizer's own chat template when it has
 * one (from chat_template.jinja or tokenizer_config.json; the tool-use variant of a named list), with
 * the tool-call codec its template and special tokens call for; else ChatML with Hermes calls. The
 * shipped byte tokenizer is ChatML by construction.
 */
export function conversationFormat(tokenizer: TextTokenizer | null): ConversationFormat {
  const config = tokenizerConfig(tokenizer);
  if (!tokenizer || !config) return CHATML_FORMAT;
  // Spindle's own template (the shipped base, and every model saved from it) writes exactly Spindle's
  // ChatML: rendered natively, an environment's system prompt keeps the tool list its style writes.
  if (config.chat_template === SPINDLE_CHAT_TEMPLATE) return CHATML_FORMAT;
  const known = templateFormats.get(tokenizer);
  if (known) return known;
  const hf = tokenizer as Partial<HfTokenizerShape>;
  const hasToken = (token: string) => hf.tokenToId?.(token) !== undefined;
  const origin = hf.chatTemplateFile ?? 'tokenizer_config.json';
  const template = ChatTemplate.fromTokenizerConfig(config, { tools: true, hasToken, origin });
  const model = hf.modelName ? `the model ${hf.modelName}` : 'this model';
  const format = template ? templateFormat(template, model, origin, hasToken(IM_START)) : CHATML_FORMAT;
  templateFormats.set(tokenizer, format);
  return format;
}

/** One line on the chat format a tokenizer gets, for load messages and model cards. */
export function chatFormatSummary(tokenizer: TextTokenizer | null): string {
  const config = tokenizerConfig(tokenizer);
  if (!config) return "Spindle's ChatML, tool calls as Hermes <tool_call> blocks";
  const format = conversationFormat(tokenizer);
  if (config.chat_template === SPINDLE_CHAT_TEMPLATE)
    return "Spindle's own chat template (ChatML, tool calls as Hermes <tool_call> blocks), rendered natively";
  if (format === CHATML_FORMAT)
    return "no chat template (neither chat_template.jinja nor tokenizer_config.json has one): Spindle's ChatML, tool calls as Hermes <tool_call> blocks";
  const from = (tokenizer as Partial<HfTokenizerShape>).chatTemplateFile ?? 'tokenizer_config.json';
  if (format.toolRefusal)
    return `the model's own chat template (${from}); it drops tool calls, so environments with tools are refused`;
  const tools = format.rendersTools ? 'tools listed by the template' : "tools listed in Spindle's system prompt";
  return `the model's own chat template (${from}); tool calls: ${format.calls.summary}; ${tools}`;
}

/**
 * The stop token the model ends a turn with in this format (`<|im_end|>`, `<|eot_id|>`): the one its
 * turn close starts with, so training teaches it; null when the close starts with none of them.
 */
function turnStop(tokenizer: TextTokenizer, format: ConversationFormat): string | null {
  const spelled = tokenizerConfig(tokenizer) ? tokenizer.stopIds.map((id) => tokenizer.decode([id])) : [IM_END];
  return spelled.find((stop) => stop !== '' && format.turnClose(stop) !== format.turnClose(null)) ?? null;
}

/**
 * Token ids and assistant mask of a whole conversation (messages in Spindle's stored form: calls inline,
 * results in `<tool_response>` blocks), built as an episode builds them: the prompt up to the first
 * assistant turn, each assistant turn as the format writes it and its stop token (mask 1: what the model
 * samples), then the turn close and what follows it (mask 0). Each piece is encoded on its own, as the
 * episode encodes it.
 */
export function trainingTokens(
  messages: ChatMessage[],
  tools: ToolSchema[],
  tokenizer: TextTokenizer,
): { tokens: number[]; mask: number[] } {
  const format = conversationFormat(tokenizer);
  // A template that drops calls would train the model on conversations with its calls silently removed.
  if (format.toolRefusal && (tools.length > 0 || messages.some((m) => m.role === 'tool'))) {
    throw new Error(format.toolRefusal('the conversation has tool calls'));
  }
  const stop = turnStop(tokenizer, format);
  const tokens: number[] = [];
  const mask: number[] = [];
  const push = (text: string, m: number) => {
    for (const id of text === '' ? [] : tokenizer.encode(text)) {
      tokens.push(id);
      mask.push(m);
    }
  };
  const assistantAt = messages.flatMap((m, i) => (m.role === 'assistant' ? [i] : []));
  if (assistantAt.length === 0) throw new Error('the conversation has no assistant message to learn from');
  push(format.prompt(messages.slice(0, assistantAt[0]), tools), 0);
  for (const [k, at] of assistantAt.entries()) {
    push(format.assistantText(messages.slice(0, at), messages[at], tools) + (stop ?? ''), 1);
    const next = assistantAt[k + 1] ?? messages.length;
    const after =
      at + 1 < messages.length
        ? format.continuation(messages.slice(0, at + 1), messages.slice(at + 1, next), tools, {
            addGenerationPrompt: next < messages.length,
          })
        : '';
    push(format.turnClose(stop) + after, 0);
  }
  return { tokens, mask };
}

/**
 * The text that closes a sampled turn: the format's close, less the stop token the model sampled. A stop
 * token of the model's other than the one the format closes turns with (Llama's `<|eom_id|>` after a call,
 * where the template ends every turn with `<|eot_id|>`) stands in for it, so the turn is not closed twice.
 */
export function closeAfterSampled(
  tokenizer: TextTokenizer | null,
  format: ConversationFormat,
  sampled: number[],
): string {
  const stop = sampledStop(tokenizer, sampled);
  const own = stop !== null && tokenizer ? turnStop(tokenizer, format) : null;
  return format.turnClose(own ?? stop);
}

/** The text of the stop token that ends `sampled`, if it ends with one. */
export function sampledStop(tokenizer: TextTokenizer | null, sampled: number[]): string | null {
  if (!tokenizer || sampled.length === 0) return null;
  const last = sampled[sampled.length - 1];
  if (!tokenizer.stopIds.includes(last)) return null;
  // A Hugging Face tokenizer spells its own stop token (`<|eot_id|>` where there is no `<|im_end|>`).
  return tokenizerConfig(tokenizer) ? tokenizer.decode([last]) : IM_END;
}

/** What this module reads of an HfTokenizer, by shape, so it does not load the tokenizers package. */
interface HfTokenizerShape {
  configJson: Record<string, unknown>;
  chatTemplateFile: string | null;
  modelName: string | null;
  tokenToId(token: string): number | undefined;
}

/** A Hugging Face tokenizer's tokenizer_config.json (HfTokenizer.configJson, the chat template in it); null for the byte tokenizer. */
function tokenizerConfig(tokenizer: TextTokenizer | null): Record<string, unknown> | null {
  const config = (tokenizer as { configJson?: unknown } | null)?.configJson;
  return config && typeof config === 'object' ? (config as Record<string, unknown>) : null;
}
