/**
 * What a tool-call codec is (tool-call-codec.ts says which families there are and how one is chosen): the
 * interface each family's codec implements, here in codecs/ and tool-call-codec.ts's own hermes,
 * llama3-json and plain, and the OpenAI form a turn's calls are lifted into.
 */
import type { ParsedAssistant } from '../parse.ts';

export type ToolCallFamily =
  | 'hermes'
  | 'llama3-json'
  | 'mistral'
  | 'qwen3-coder'
  | 'function-gemma'
  | 'phi4-mini'
  | 'deepseek'
  | 'harmony'
  | 'plain';

export interface LiftedCall {
  name: string;
  arguments: Record<string, unknown>;
  /** The arguments' JSON as the model wrote it, for a codec whose templates take it as text (`argumentsAs: 'text'`). */
  argumentsText?: string;
}

export interface LiftedTurn {
  /** The text the template renders beside the calls. */
  content: string;
  calls: LiftedCall[];
  /** The turn's thought, for a codec whose templates render it from a field of its own (`reasoningField`). */
  reasoning?: string;
}

export interface ToolCallCodec {
  readonly family: ToolCallFamily;
  /** One line for load messages and model cards. */
  readonly summary: string;
  /** True for the plain fallback: the model's own call format was not recognised. */
  readonly fallback: boolean;
  /**
   * How a call's `arguments` reach the template: an object, or the JSON text as sampled (DeepSeek's and
   * gpt-oss's templates write it as given).
   */
  readonly argumentsAs: 'object' | 'text';
  /** The message field a lifted turn's thought goes in (`thinking` for gpt-oss); null when lift gives none. */
  readonly reasoningField: 'thinking' | null;
  /** What the template's rendering of the probe call shows for this format (a string it contains, or a pattern). */
  readonly shows: string | RegExp | null;
  /** The call syntax a template's own tool instructions name, for templates that render calls as the assistant's text. */
  readonly syntax: string | null;
  /** Special tokens that, all in the tokenizer, pick this format when the template says nothing. */
  readonly tokens: readonly string[];
  /** The sampled turn's thought, calls and answer. Never throws. */
  parse(text: string): ParsedAssistant;
  /** The turn in OpenAI form (calls in `tool_calls`), or null when it must reach the template as written. */
  lift(content: string): LiftedTurn | null;
}
