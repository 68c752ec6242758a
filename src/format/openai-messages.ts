/**
 * Conversations in the OpenAI / TRL shape that chat templates and `apply_chat_template` take:
 * assistant turns carry their calls in `tool_calls` (arguments as objects, as the Qwen/Hermes templates
 * expect), and each tool result is its own `tool` message holding the bare result text (the template
 * adds its own `<tool_response>` wrapping; a pre-wrapped result would be wrapped twice).
 *
 * Spindle stores conversations as the policy wrote them: assistant content with its calls inline (Hermes
 * `<tool_call>` blocks, or a Llama JSON call: the model family's codec, tool-call-codec.ts, reads them),
 * one `tool` message per turn holding every result in `<tool_response>` blocks (chatml.ts
 * `toolResponseMessage`). These two functions convert between the forms, losslessly for what the policy
 * writes in Hermes form.
 */
import type { ChatMessage } from '../contracts.ts';
import { splitToolResponses, toolResponseMessage } from './chatml.ts';
import { parseLooseJson } from './loose-json.ts';
import type { LiftedTurn, ToolCallCodec } from './codecs/codec.ts';
import { HERMES_CALLS } from './tool-call-codec.ts';

export interface OpenAiToolCall {
  type: 'function';
  /** `arguments` an object, or the JSON text as the model wrote it for templates that write it as given (DeepSeek's, gpt-oss's). */
  function: { name: string; arguments: Record<string, unknown> | string };
}

export interface OpenAiMessage {
  role: ChatMessage['role'];
  content: string;
  tool_calls?: OpenAiToolCall[];
  /** The text inside the turn's think block, as written (only for templates that read it: Qwen3). */
  reasoning_content?: string;
  /** The turn's analysis, for gpt-oss's templates (the harmony codec's lift). */
  thinking?: string;
}

export interface OpenAiFormOptions {
  /** How the model writes calls (default Hermes, Spindle's own). */
  codec?: ToolCallCodec;
  /**
   * Give a leading `<think>` block as `reasoning_content`, for a template that renders it from there
   * (Qwen3). The text goes as written, so an empty block sampled as `<think>\n\n</think>` is `"\n\n"`,
   * which the template renders back as sampled instead of dropping it as it drops an empty string.
   */
  reasoning?: boolean;
  /**
   * Whether the `turn`-th assistant turn goes as `tool_calls` when the codec lifts it (default: every
   * such turn); false keeps it as written. Exports ask whether the calls really ran, and whether the
   * template writes them back as they were sampled.
   */
  liftTurn?: (turn: number, lifted: LiftedTurn) => boolean;
}

/** A leading think block, as written, and the text after it; null when the turn does not open with one. */
function splitReasoning(content: string): { reasoning: string; rest: string } | null {
  const m = /^\s*<think>/.exec(content);
  const close = m ? content.indexOf('</think>', m[0].length) : -1;
  if (!m || close < 0) return null;
  return { reasoning: content.slice(m[0].length, close), rest: content.slice(close + '</think>'.length) };
}

function assistantMessage(content: string, turn: number, opts: OpenAiFormOptions): OpenAiMessage {
  const codec = opts.codec ?? HERMES_CALLS;
  const thought = opts.reasoning ? splitReasoning(content) : null;
  const body = thought ? thought.rest : content;
  const liftable = codec.lift(body);
  const lifted = liftable && (opts.liftTurn?.(turn, liftable) ?? true) ? liftable : null;
  const reasoning = thought ? { reasoning_content: thought.reasoning } : {};
  if (!lifted) return { role: 'assistant', content: thought ? body.replace(/^\n+/, '') : body, ...reasoning };
  const own =
    lifted.reasoning !== undefined && codec.reasoningField ? { [codec.reasoningField]: lifted.reasoning } : {};
  const message: OpenAiMessage = { role: 'assistant', content: lifted.content, ...reasoning, ...own };
  if (lifted.calls.length === 0) return message;
  return {
    ...message,
    tool_calls: lifted.calls.map((c) => ({
      type: 'function',
      function: {
        name: c.name,
        arguments: codec.argumentsAs === 'text' ? (c.argumentsText ?? JSON.stringify(c.arguments)) : c.arguments,
      },
    })),
  };
}

/**
 * Hermes-text messages → OpenAI messages; tool results are read back from their `<tool_response>`
 * blocks. An assistant turn's calls move to `tool_calls` only as the codec lifts them (every call
 * readable, nothing lost); otherwise the turn stays as text: there is no call to name.
 */
export function toOpenAiMessages(messages: ChatMessage[], opts: OpenAiFormOptions = {}): OpenAiMessage[] {
  const out: OpenAiMessage[] = [];
  let turn = 0;
  for (const m of messages) {
    if (m.role === 'assistant') out.push(assistantMessage(m.content, turn++, opts));
    else if (m.role === 'tool') {
      for (const content of splitToolResponses(m.content)) out.push({ role: 'tool', content });
    } else out.push({ role: m.role, content: m.content });
  }
  return out;
}

/** A call's arguments as an object: JSON text is parsed (a row from a text-arguments template), anything unreadable is `{}`. */
function argumentsObject(args: Record<string, unknown> | string): Record<string, unknown> {
  if (typeof args !== 'string') return args;
  const read = parseLooseJson(args);
  const value = read.ok ? read.value : null;
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/**
 * OpenAI messages → Hermes-text messages: calls written back as `<tool_call>{"name":…,"arguments":…}</tool_call>`
 * blocks (compact JSON, one a line after the text: as Spindle's byte models write them, and as their chat
 * template renders `tool_calls`), consecutive tool results joined into one turn.
 */
export function fromOpenAiMessages(messages: OpenAiMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  let pending: string[] = [];
  const flush = () => {
    if (pending.length > 0) out.push(toolResponseMessage(pending));
    pending = [];
  };
  for (const m of messages) {
    if (m.role === 'tool') {
      pending.push(m.content);
      continue;
    }
    flush();
    if (m.role === 'assistant' && m.tool_calls?.length) {
      const blocks = m.tool_calls.map(
        (c) =>
          `<tool_call>${JSON.stringify({ name: c.function.name, arguments: argumentsObject(c.function.arguments) })}</tool_call>`,
      );
      out.push({ role: 'assistant', content: [m.content, ...blocks].filter((s) => s !== '').join('\n') });
    } else out.push({ role: m.role, content: m.content });
  }
  flush();
  return out;
}
