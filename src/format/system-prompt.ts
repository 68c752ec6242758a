/**
 * The system message that lists the tools, in three sizes:
 *
 * - 'full': the Hermes convention — one JSON schema per line inside `<tools></tools>`, the call syntax
 *   `<tool_call>{"name": …, "arguments": {…}}</tool_call>` and reasoning in `<think></think>`. For models
 *   that were trained on Hermes/Qwen-style prompts (and for remote APIs collecting SFT data).
 * - 'compact': for the shipped byte-level policy, which trains on CPU where every prompt byte costs
 *   time: `<tools>calc(expression) js(code)</tools>` and one line saying how to think and call.
 *   Pure ASCII, so one byte is one token.
 * - 'described': compact, with each tool on its own line and its description after its signature
 *   (`get_price(item): Returns the price of a product.`), for small models that must pick a tool they
 *   were never trained on by what it says it does.
 */
import type { ChatMessage, SystemPromptStyle, ToolSchema } from '../contracts.ts';

export type { SystemPromptStyle } from '../contracts.ts';

export interface SystemPromptOptions {
  style: SystemPromptStyle;
  /** Task-independent instructions placed before the tool block (e.g. "Answer with a number."). */
  instructions?: string;
}

// Kept to a few words: the shipped model learns the call syntax from its training transcripts, and
// each byte here is paid for on every forward pass of every training step.
const COMPACT_CALL_LINE = 'Think, call tools as JSON, then answer.';

const FULL_PREAMBLE =
  'You can call functions to help with the user request. The available functions are described by the JSON ' +
  'schemas inside <tools></tools>:';

const FULL_CALL_RULES = [
  'First reason step by step inside <think></think>. To call a function, write a JSON object with its name and ' +
    'arguments inside <tool_call></tool_call> tags, one object per call (several calls per turn are allowed):',
  '<tool_call>',
  '{"name": "<function-name>", "arguments": {<argument-name>: <value>}}',
  '</tool_call>',
  'Each result comes back inside <tool_response></tool_response>. When you know the answer, reply with it ' +
    'without a tool call.',
].join('\n');

/** `calc(expression)`, optional parameters marked `?`: `grep(pattern, path?)`. */
export function compactSignature(tool: ToolSchema): string {
  const required = new Set(tool.parameters.required ?? []);
  const params = Object.keys(tool.parameters.properties).map((p) => (required.has(p) ? p : `${p}?`));
  return `${tool.name}(${params.join(', ')})`;
}

/** `get_price(item): Returns the price of a product.` (the signature alone when there is no description). */
function describedLine(tool: ToolSchema): string {
  const description = tool.description?.trim();
  return description ? `${compactSignature(tool)}: ${description}` : compactSignature(tool);
}

/** Hermes wraps each schema as an OpenAI function object. */
function fullSchemaLine(tool: ToolSchema): string {
  return JSON.stringify({ type: 'function', function: tool });
}

export function renderSystemPrompt(tools: ToolSchema[], opts: SystemPromptOptions): ChatMessage {
  const parts: string[] = [];
  if (opts.instructions) parts.push(opts.instructions.trim());
  if (opts.style !== 'full') {
    if (tools.length > 0) {
      const list =
        opts.style === 'compact' ? tools.map(compactSignature).join(' ') : `\n${tools.map(describedLine).join('\n')}\n`;
      parts.push(`<tools>${list}</tools>`);
      parts.push(COMPACT_CALL_LINE);
    } else {
      parts.push('Think, then answer.');
    }
  } else {
    if (tools.length > 0) {
      parts.push(FULL_PREAMBLE);
      parts.push(`<tools>\n${tools.map(fullSchemaLine).join('\n')}\n</tools>`);
      parts.push(FULL_CALL_RULES);
    } else {
      parts.push('First reason step by step inside <think></think>, then give your answer.');
    }
  }
  return { role: 'system', content: parts.join('\n') };
}
