/**
 * How the agent loop writes a conversation as prompt text, turn by turn: Spindle's ChatML (the shipped
 * byte-level model, remote text policies) or a Hugging Face model's own chat template (chat-template.ts).
 *
 *   prompt(messages, tools)                → text the policy continues from (system + user + assistant header)
 *   turnClose(stop)                        → closes the assistant turn after the sampled text
 *   continuation(before, added, tools, …)  → the tool turn after it and, unless it is the last, the next header
 *
 * Only sampled text is policy text, so the assistant mask covers exactly the model's tokens either way.
 */
import type { ChatMessage, ToolSchema } from '../contracts.ts';
import type { TextTokenizer } from '../model/tokenizer.ts';
import { ChatTemplate } from '../format/chat-template.ts';
import { IM_END, assistantTurnClose, renderChatML, renderContinuation } from '../format/chatml.ts';

export interface ConversationFormat {
  /** The template lists the tools itself (from `tools`); the system prompt should not list them again. */
  readonly rendersTools: boolean;
  prompt(messages: ChatMessage[], tools: ToolSchema[]): string;
  /** `stop`: the stop token's text when the policy sampled one (`<|im_end|>`, `<|eot_id|>`), else null. */
  turnClose(stop: string | null): string;
  continuation(before: ChatMessage[], added: ChatMessage[], tools: ToolSchema[], opts: { addGenerationPrompt: boolean }): string;
}

export const CHATML_FORMAT: ConversationFormat = {
  rendersTools: false,
  prompt: (messages) => renderChatML(messages, { addGenerationPrompt: true }),
  turnClose: (stop) => assistantTurnClose(stop === IM_END),
  continuation: (_before, added, _tools, { addGenerationPrompt }) => (addGenerationPrompt ? renderContinuation(added) : renderChatML(added)),
};

function templateFormat(template: ChatTemplate): ConversationFormat {
  return {
    rendersTools: template.supportsTools,
    prompt: (messages, tools) => template.prompt(messages, tools),
    turnClose: (stop) => template.turnClose(stop),
    continuation: (before, added, tools, opts) => template.continuation(before, added, tools, opts),
  };
}

/**
 * The format a policy's tokenizer calls for: a Hugging Face tokenizer's own `chat_template` when its
 * tokenizer_config.json has one (the tool-use variant of a named list), else ChatML. The shipped byte
 * tokenizer is ChatML by construction.
 */
export function conversationFormat(tokenizer: TextTokenizer | null): ConversationFormat {
  const config = tokenizerConfig(tokenizer);
  if (!config) return CHATML_FORMAT;
  const template = ChatTemplate.fromTokenizerConfig(config, { tools: true });
  return template ? templateFormat(template) : CHATML_FORMAT;
}

/** The text of the stop token that ends `sampled`, if it ends with one. */
export function sampledStop(tokenizer: TextTokenizer | null, sampled: number[]): string | null {
  if (!tokenizer || sampled.length === 0) return null;
  const last = sampled[sampled.length - 1];
  if (last !== tokenizer.imEndId && last !== tokenizer.eosId) return null;
  // A Hugging Face tokenizer spells its own stop token (`<|eot_id|>` where there is no `<|im_end|>`).
  return tokenizerConfig(tokenizer) ? tokenizer.decode([last]) : IM_END;
}

/** A Hugging Face tokenizer's tokenizer_config.json (HfTokenizer.configJson); null for the byte tokenizer. Read by shape, so this module does not load the tokenizers package. */
function tokenizerConfig(tokenizer: TextTokenizer | null): Record<string, unknown> | null {
  const config = (tokenizer as { configJson?: unknown } | null)?.configJson;
  return config && typeof config === 'object' ? (config as Record<string, unknown>) : null;
}
