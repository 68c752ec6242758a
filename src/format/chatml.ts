/**
 * ChatML rendering (`<|im_start|>role\n…<|im_end|>\n`) and the pieces the agent loop needs to build
 * token ids turn by turn without re-rendering the whole conversation:
 *
 *   prompt  = renderChatML([system, user], { addGenerationPrompt: true })   // ends with assistantHeader()
 *   sampled = the policy's text, including `<|im_end|>` when it stopped on it
 *   next    = assistantTurnClose(sampledImEnd) + renderContinuation([toolMessage])
 *
 * Concatenating these equals `renderChatML(allMessages, { addGenerationPrompt: true })` (tested), so the
 * token ids a policy was trained on are exactly the ids of the rendered conversation.
 */
import type { ChatMessage } from '../contracts.ts';

export const IM_START = '<|im_start|>';
export const IM_END = '<|im_end|>';

/** One turn: `<|im_start|>{role}\n{content}<|im_end|>\n`. */
function renderMessage(message: ChatMessage): string {
  return `${IM_START}${message.role}\n${message.content}${IM_END}\n`;
}

/** The whole conversation; with `addGenerationPrompt` it ends with the open assistant header. */
export function renderChatML(messages: ChatMessage[], opts: { addGenerationPrompt?: boolean } = {}): string {
  const body = messages.map(renderMessage).join('');
  return opts.addGenerationPrompt ? body + assistantHeader() : body;
}

/** What the policy continues from: `<|im_start|>assistant\n`. */
export function assistantHeader(): string {
  return `${IM_START}assistant\n`;
}

/**
 * Text that closes an assistant turn after the sampled text. These are prompt tokens, not policy tokens:
 * when the policy sampled `<|im_end|>` itself only the newline is left; when generation was cut by the
 * token limit the turn is closed for it.
 */
export function assistantTurnClose(sampledImEnd: boolean): string {
  return sampledImEnd ? '\n' : `${IM_END}\n`;
}

/** Messages that follow an assistant turn (tool responses, a user reply) plus the next assistant header. */
export function renderContinuation(messages: ChatMessage[]): string {
  return renderChatML(messages, { addGenerationPrompt: true });
}

/** One tool result block: `<tool_response>\n{text}\n</tool_response>`. */
function formatToolResponse(text: string): string {
  return `<tool_response>\n${text}\n</tool_response>`;
}

/**
 * The `tool` turn answering one assistant turn: one `<tool_response>` block per call, in call order
 * (Hermes renders parallel results in one turn, as Qwen's template does).
 */
export function toolResponseMessage(observations: string[]): ChatMessage {
  return { role: 'tool', content: observations.map(formatToolResponse).join('\n') };
}

/**
 * The results inside a tool turn's `<tool_response>` blocks, in call order: the inverse of
 * `toolResponseMessage`, also reading blocks written without the newlines. Content that is not only
 * such blocks is one result, as it stands.
 */
export function splitToolResponses(content: string): string[] {
  const blocks = [...content.matchAll(/<tool_response>\n?([\s\S]*?)\n?<\/tool_response>/g)];
  const rest = content.replace(/<tool_response>\n?([\s\S]*?)\n?<\/tool_response>/g, '');
  return blocks.length > 0 && rest.trim() === '' ? blocks.map((m) => m[1]) : [content];
}

/** The observation the model sees for a tool result; errors are spelled out so the model can learn from them. */
export function observationText(r: { result: string; error: string | null }): string {
  if (r.error === null) return r.result;
  return r.result ? `error: ${r.error}\n${r.result}` : `error: ${r.error}`;
}
