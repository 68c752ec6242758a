/**
 * Conversations in the OpenAI / TRL shape that chat templates and `apply_chat_template` take:
 * assistant turns carry their calls in `tool_calls` (arguments as objects, as the Qwen/Hermes templates
 * expect), and each tool result is its own `tool` message holding the bare result text (the template
 * adds its own `<tool_response>` wrapping; a pre-wrapped result would be wrapped twice).
 *
 * Spindle stores conversations as the policy saw them in Hermes text: assistant content with inline
 * `<tool_call>` blocks, one `tool` message per turn holding every result in `<tool_response>` blocks
 * (chatml.ts `toolResponseMessage`). These two functions convert between the forms, losslessly for
 * what the policy writes.
 */
import type { ChatMessage } from '../contracts.ts';
import { splitToolResponses, toolResponseMessage } from './chatml.ts';
import { isCallError, parseAssistant } from './parse.ts';

export interface OpenAiToolCall {
  type: 'function';
  function: { name: string; arguments: Record<string, unknown> };
}

export interface OpenAiMessage {
  role: ChatMessage['role'];
  content: string;
  tool_calls?: OpenAiToolCall[];
}

const CALL_BLOCK = /<tool_call>[\s\S]*?(?:<\/tool_call>|$)/g;

/**
 * Hermes-text messages → OpenAI messages; tool results are read back from their `<tool_response>`
 * blocks. A turn with a call the parser could not read stays as text: there is no call to name.
 */
export function toOpenAiMessages(messages: ChatMessage[]): OpenAiMessage[] {
  const out: OpenAiMessage[] = [];
  for (const m of messages) {
    if (m.role === 'assistant') {
      const calls = parseAssistant(m.content).calls;
      const readable = calls.flatMap((c) => (isCallError(c) ? [] : [c]));
      const blocks = m.content.match(CALL_BLOCK) ?? [];
      // Only when every block is one readable call can the blocks leave the text without losing anything.
      if (readable.length === 0 || readable.length !== calls.length || blocks.length !== calls.length) {
        out.push({ role: 'assistant', content: m.content });
        continue;
      }
      const content = m.content.replace(CALL_BLOCK, '').trim();
      out.push({
        role: 'assistant', content,
        tool_calls: readable.map((c) => ({ type: 'function', function: { name: c.name, arguments: c.arguments } })),
      });
    } else if (m.role === 'tool') {
      for (const content of splitToolResponses(m.content)) out.push({ role: 'tool', content });
    } else out.push({ role: m.role, content: m.content });
  }
  return out;
}

/** OpenAI messages → Hermes-text messages: calls written back as `<tool_call>` blocks, consecutive tool results joined into one turn. */
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
      const blocks = m.tool_calls.map((c) => `<tool_call>\n${JSON.stringify({ name: c.function.name, arguments: c.function.arguments })}\n</tool_call>`);
      out.push({ role: 'assistant', content: [m.content, ...blocks].filter((s) => s !== '').join('\n') });
    } else out.push({ role: m.role, content: m.content });
  }
  flush();
  return out;
}
