/**
 * How one model family writes tool calls, read back from its sampled text and lifted into the OpenAI
 * `tool_calls` form its chat template renders:
 *
 *   hermes          `<tool_call>{"name": …, "arguments": …}</tool_call>` blocks (Qwen2.5, Qwen3, Hermes, SmolLM3; Spindle's own format)
 *   llama3-json     `{"name": …, "parameters": …}` as the whole message, maybe after `<|python_tag|>` (Llama 3.1 / 3.2)
 *   mistral         `[TOOL_CALLS]name[ARGS]{…}` (Mistral, Ministral, Magistral, Devstral; the older JSON list too)
 *   qwen3-coder     `<tool_call><function=name><parameter=key>value</parameter></function></tool_call>`
 *   function-gemma  `<start_function_call>call:name{key:<escape>value<escape>}<end_function_call>` (Gemma 3's FunctionGemma)
 *   phi4-mini       `<|tool_call|>[{"name": …, "arguments": …}]<|/tool_call|>`
 *   deepseek        `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>name` and a json fence
 *                   (V3, R1; V3.1's form too)
 *   harmony         gpt-oss: `<|channel|>commentary to=functions.name <|constrain|>json<|message|>{…}`, thinking in `analysis`
 *   plain           the fallback for a template whose call format is none of these: the template only ever sees
 *                   the text as written, tools are described in Spindle's own system prompt and calls read as
 *                   Hermes blocks. It says it is a fallback, so a load message or model card can say so too.
 *
 * Which one a model gets is decided from what its template renders for a probe call, from the call
 * syntax its tool instructions name (a template that renders the assistant's text as written), and from
 * the tokenizer's special tokens when neither says (template-probe.ts). Every parser tolerates what a
 * small model mid-training writes (several calls per turn, a cut-off last call, a think block) and reads
 * a turn in time linear in its length, at most MAX_CALLS_PER_TURN calls.
 */
import { DEEPSEEK_CALLS } from './codecs/deepseek.ts';
import { FUNCTION_GEMMA_CALLS } from './codecs/function-gemma.ts';
import { HARMONY_CALLS } from './codecs/harmony.ts';
import { MISTRAL_CALLS } from './codecs/mistral.ts';
import { PHI4_CALLS } from './codecs/phi4.ts';
import { QWEN_XML_CALLS } from './codecs/qwen-xml.ts';
import { liftLlamaCalls, parseLlamaAssistant, PYTHON_TAG } from './llama-calls.ts';
import type { LiftedTurn, ToolCallCodec } from './codecs/codec.ts';
import { isCallError, parseAssistant } from './parse.ts';

/** The probe function's name, which template-probe.ts renders a call to. */
export const PROBE_TOOL = 'spindle_probe_tool';

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
  argumentsAs: 'object',
  reasoningField: null,
  shows: '<tool_call>',
  syntax: '<tool_call>',
  tokens: ['<tool_call>'],
  parse: parseAssistant,
  lift: liftHermesCalls,
};

export const LLAMA3_JSON_CALLS: ToolCallCodec = {
  family: 'llama3-json',
  summary: `Llama 3.1 JSON: {"name": …, "parameters": …} as the whole message (${PYTHON_TAG} allowed before it)`,
  fallback: false,
  argumentsAs: 'object',
  reasoningField: null,
  shows: new RegExp(`"name":\\s*"${PROBE_TOOL}"\\s*,\\s*"parameters"\\s*:`),
  // Its instructions ask for JSON with "parameters", which every JSON schema in a tool list has too: not a sign.
  syntax: null,
  tokens: [PYTHON_TAG],
  parse: parseLlamaAssistant,
  lift: liftLlamaCalls,
};

export const PLAIN_CALLS: ToolCallCodec = {
  family: 'plain',
  summary:
    "plain fallback: the template's own call format is not one Spindle reads, so tools are described in Spindle's system prompt and calls read as <tool_call> blocks",
  fallback: true,
  argumentsAs: 'object',
  reasoningField: null,
  shows: null,
  syntax: null,
  tokens: [],
  parse: parseAssistant,
  lift: () => null,
};

/**
 * The formats a template can be recognised as, in the order they are tried: harmony and Qwen3-Coder's XML
 * before Hermes (their renderings and instructions contain `<tool_call>`-like text too), Llama's JSON last.
 */
export const TOOL_CALL_CODECS: readonly ToolCallCodec[] = [
  HARMONY_CALLS,
  QWEN_XML_CALLS,
  HERMES_CALLS,
  MISTRAL_CALLS,
  FUNCTION_GEMMA_CALLS,
  PHI4_CALLS,
  DEEPSEEK_CALLS,
  LLAMA3_JSON_CALLS,
];

const shown = (codec: ToolCallCodec, text: string) =>
  typeof codec.shows === 'string' ? text.includes(codec.shows) : (codec.shows?.test(text) ?? false);

/**
 * The codec for a template that rendered a probe call as `renderedCall` (null when it renders none, or
 * could not be asked); else the one whose call syntax the template's tool `instructions` name (a template
 * that renders the assistant's text as written: SmolLM3's); else the tokenizer's special tokens decide:
 * Qwen's tokenizers have `<tool_call>`, Llama 3's `<|python_tag|>`, Mistral's `[TOOL_CALLS]`.
 */
export function chooseToolCallCodec(
  renderedCall: string | null,
  hasToken: (token: string) => boolean,
  instructions: string | null = null,
): ToolCallCodec {
  if (renderedCall !== null) {
    const codec = TOOL_CALL_CODECS.find((c) => shown(c, renderedCall));
    if (codec) return codec;
    if (renderedCall.includes(PROBE_TOOL)) return PLAIN_CALLS; // a call format of its own
  }
  if (instructions !== null) {
    const named = TOOL_CALL_CODECS.find((c) => c.syntax !== null && instructions.includes(c.syntax));
    if (named) return named;
  }
  return TOOL_CALL_CODECS.find((c) => c.tokens.length > 0 && c.tokens.every(hasToken)) ?? PLAIN_CALLS;
}
