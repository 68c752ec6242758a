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
import { HERMES_CALLS, LLAMA3_JSON_CALLS, type ToolCallCodec } from './tool-call-codec.ts';

export interface OpenAiToolCall {
  type: 'function';
  function: { name: string; arguments: Record<string, unknown> };
}

export interface OpenAiMessage {
  role: ChatMessage['role'];
  content: string;
  tool_calls?: OpenAiToolCall[];
  /** The text inside the turn's think block, as written (only for templates that read it: Qwen3). */
  reasoning_content?: string;
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
}

/** A leading think block, as written, and the text after it; null when the turn does not open with one. */
function splitReasoning(content: string): { reasoning: string; rest: string } | null {
  const m = /^\s*<think>/.exec(content);
  const close = m ? content.indexOf('</think>', m[0].length) : -1;
  if (!m || close < 0) return null;
  return { reasoning: content.slice(m[0].length, close), rest: content.slice(close + '</think>'.length) };
}

function assistantMessage(content: string, opts: OpenAiFormOptions): OpenAiMessage {
  const codec = opts.codec ?? HERMES_CALLS;
  const thought = opts.reasoning ? splitReasoning(content) : null;
  const body = thought ? thought.rest : content;
  const lifted = codec.lift(body);
  const reasoning = thought ? { reasoning_content: thought.reasoning } : {};
  if (!lifted) return { role: 'assistant', content: thought ? body.replace(/^\n+/, '') : body, ...reasoning };
  return {
    role: 'assistant', content: lifted.content, ...reasoning,
    tool_calls: lifted.calls.map((c) => ({ type: 'function', function: { name: c.name, arguments: c.arguments } })),
  };
}

/**
 * The codec a stored conversation's calls were written in. Turns are stored as the model sampled them, so
 * a Llama-3.1-style model's calls are whole JSON messages, not `<tool_call>` blocks: Llama's when no
 * assistant turn lifts as Hermes and one does as Llama JSON, Hermes (Spindle's own) otherwise.
 */
export function storedCallCodec(messages: ChatMessage[]): ToolCallCodec {
  const turns = messages.filter((m) => m.role === 'assistant').map((m) => m.content);
  if (turns.some((t) => HERMES_CALLS.lift(t))) return HERMES_CALLS;
  return turns.some((t) => LLAMA3_JSON_CALLS.lift(t)) ? LLAMA3_JSON_CALLS : HERMES_CALLS;
}

/**
 * Hermes-text messages → OpenAI messages; tool results are read back from their `<tool_response>`
 * blocks. An assistant turn's calls move to `tool_calls` only as the codec lifts them (every call
 * readable, nothing lost); otherwise the turn stays as text: there is no call to name.
 */
export function toOpenAiMessages(messages: ChatMessage[], opts: OpenAiFormOptions = {}): OpenAiMessage[] {
  const out: OpenAiMessage[] = [];
  for (const m of messages) {
    if (m.role === 'assistant') out.push(assistantMessage(m.content, opts));
    else if (m.role === 'tool') {
      for (const content of splitToolResponses(m.content)) out.push({ role: 'tool', content });
    } else out.push({ role: m.role, content: m.content });
  }
  return out;
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
      const blocks = m.tool_calls.map(({ function: fn }) => `<tool_call>${JSON.stringify({ name: fn.name, arguments: fn.arguments })}</tool_call>`);
      out.push({ role: 'assistant', content: [m.content, ...blocks].filter((s) => s !== '').join('\n') });
    } else out.push({ role: m.role, content: m.content });
  }
  flush();
  return out;
}
