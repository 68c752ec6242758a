/**
 * How one model family writes tool calls, read back from its sampled text and lifted into the OpenAI
 * `tool_calls` form its chat template renders:
 *
 *   hermes       `<tool_call>{"name": …, "arguments": …}</tool_call>` blocks (Qwen2.5, Qwen3, Hermes; Spindle's own format)
 *   llama3-json  `{"name": …, "parameters": …}` as the whole message, maybe after `<|python_tag|>` (Llama 3.1 / 3.2)
 *   plain        the fallback for a template whose call format is none of these: the template only ever sees
 *                the text as written, tools are described in Spindle's own system prompt and calls read as
 *                Hermes blocks. It says it is a fallback, so a load message or model card can say so too.
 *
 * Which one a model gets is decided from what its template renders for a probe call, and from the
 * tokenizer's special tokens when the template's rendering says nothing (template-probe.ts).
 */
import { liftLlamaCalls, parseLlamaAssistant, PYTHON_TAG } from './llama-calls.ts';
import { isCallError, parseAssistant, type ParsedAssistant } from './parse.ts';

export type ToolCallFamily = 'hermes' | 'llama3-json' | 'plain';

export interface LiftedTurn {
  /** The text the template renders beside the calls. */
  content: string;
  calls: { name: string; arguments: Record<string, unknown> }[];
}

export interface ToolCallCodec {
  readonly family: ToolCallFamily;
  /** One line for load messages and model cards. */
  readonly summary: string;
  /** True for the plain fallback: the model's own call format was not recognised. */
  readonly fallback: boolean;
  /** The sampled turn's thought, calls and answer. Never throws. */
  parse(text: string): ParsedAssistant;
  /** The turn in OpenAI form (calls in `tool_calls`), or null when it must reach the template as written. */
  lift(content: string): LiftedTurn | null;
}

/** A Hermes `<tool_call>` block, closed or cut off at the end of the turn. */
const HERMES_BLOCK = /<tool_call>[\s\S]*?(?:<\/tool_call>|$)/g;

/** Calls leave the text only when every block is one readable call, so nothing is lost (the template writes them back). */
function liftHermesCalls(content: string): LiftedTurn | null {
  const calls = parseAssistant(content).calls;
  const readable = calls.flatMap((c) => (isCallError(c) ? [] : [c]));
  const blocks = content.match(HERMES_BLOCK) ?? [];
  if (readable.length === 0 || readable.length !== calls.length || blocks.length !== calls.length) return null;
  return { content: content.replace(HERMES_BLOCK, '').trim(), calls: readable };
}

export const HERMES_CALLS: ToolCallCodec = {
  family: 'hermes',
  summary: 'Hermes: <tool_call>{"name": …, "arguments": …}</tool_call> blocks',
  fallback: false,
  parse: parseAssistant,
  lift: liftHermesCalls,
};

export const LLAMA3_JSON_CALLS: ToolCallCodec = {
  family: 'llama3-json',
  summary: `Llama 3.1 JSON: {"name": …, "parameters": …} as the whole message (${PYTHON_TAG} allowed before it)`,
  fallback: false,
  parse: parseLlamaAssistant,
  lift: liftLlamaCalls,
};

export const PLAIN_CALLS: ToolCallCodec = {
  family: 'plain',
  summary: "plain fallback: the template's own call format is not one Spindle reads, so tools are described in Spindle's system prompt and calls read as <tool_call> blocks",
  fallback: true,
  parse: parseAssistant,
  lift: () => null,
};

/** The probe function's name, which template-probe.ts renders a call to. */
export const PROBE_TOOL = 'spindle_probe_tool';

/**
 * The codec for a template that rendered a probe call as `renderedCall` (null when it renders none, or
 * could not be asked), with the tokenizer's special tokens deciding when the rendering does not: Qwen's
 * tokenizers have `<tool_call>`, Llama 3's `<|python_tag|>`.
 */
export function chooseToolCallCodec(renderedCall: string | null, hasToken: (token: string) => boolean): ToolCallCodec {
  if (renderedCall !== null) {
    if (renderedCall.includes('<tool_call>')) return HERMES_CALLS;
    if (new RegExp(`"name":\\s*"${PROBE_TOOL}"\\s*,\\s*"parameters"\\s*:`).test(renderedCall)) return LLAMA3_JSON_CALLS;
    if (renderedCall.includes(PROBE_TOOL)) return PLAIN_CALLS; // a call format of its own
  }
  if (hasToken('<tool_call>')) return HERMES_CALLS;
  if (hasToken(PYTHON_TAG)) return LLAMA3_JSON_CALLS;
  return PLAIN_CALLS;
}
