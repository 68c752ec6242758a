/**
 * What a chat template does with tools, found by rendering small probe conversations rather than by
 * reading its source (a template may mention `tool_calls` and still drop them, or name them its own way):
 *
 *   listsTools      a `tools` list appears in the prompt (then Spindle leaves its own tool text out)
 *   rendersCalls    an assistant turn's calls and the `tool` result after it both appear, as `tool_calls`
 *                   or, for a template that lists tools and renders the assistant's text as written, as that
 *                   text (SmolLM2's template drops them and lists no tools: it is refused for tool environments)
 *   callsAs         'tool_calls' (Spindle lifts calls into them for the template) or 'text' (SmolLM3's
 *                   template takes the calls in the assistant's text, as written)
 *   readsReasoning  an assistant turn's `reasoning_content` appears (Qwen3 renders think blocks from it)
 *   codec           how the model writes calls: from the rendered probe call, else the call syntax the
 *                   template's tool instructions name, else the tokenizer's special tokens
 *
 * A probe the template raises on counts as "no" (a template that insists on a system message gets a
 * second try with one); one that runs past the render budget (`isFatal`) ends the probing with its error.
 */
import type { ToolCallCodec } from './codecs/codec.ts';
import { chooseToolCallCodec, PROBE_TOOL } from './tool-call-codec.ts';

export interface TemplateToolSupport {
  listsTools: boolean;
  rendersCalls: boolean;
  callsAs: 'tool_calls' | 'text';
  readsReasoning: boolean;
  codec: ToolCallCodec;
}

/** Renders template-ready messages (OpenAI form) and tools, as ChatTemplate does. */
export type RawRender = (
  messages: Record<string, unknown>[],
  opts: { tools?: object[]; addGenerationPrompt?: boolean },
) => string;

const USER = 'Spindle probes this template.';
const LISTED_TOOL = 'spindle_listed_tool';
const RESULT = 'spindle-probe-result';
const THOUGHT = 'spindle-probe-thought';
/** An assistant turn's text, standing in for a call written in it. */
const TEXT_CALL = 'spindle-probe-call-text';
const LISTED_SCHEMA = {
  type: 'function',
  function: {
    name: LISTED_TOOL,
    description: 'Lists nothing.',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
};

export function probeToolSupport(
  render: RawRender,
  hasToken: (token: string) => boolean,
  isFatal: (err: unknown) => boolean = () => false,
): TemplateToolSupport {
  /** The render's text, or null when the template raises on it (with and without a system message first). */
  const attempt = (
    messages: Record<string, unknown>[],
    opts: { tools?: object[]; addGenerationPrompt?: boolean } = {},
  ): string | null => {
    for (const tried of [messages, [{ role: 'system', content: 'Probe.' }, ...messages]]) {
      try {
        return render(tried, opts);
      } catch (err) {
        if (isFatal(err)) throw err;
      }
    }
    return null;
  };
  const user = { role: 'user', content: USER };
  const call = {
    role: 'assistant',
    content: '',
    tool_calls: [{ type: 'function', function: { name: PROBE_TOOL, arguments: { text: 'x' } } }],
  };
  const rendered = attempt([user, call, { role: 'tool', content: RESULT }]);
  // Only what follows the user's text is the call: a template may quote call syntax in its tool instructions.
  const afterUser = rendered === null ? null : rendered.slice(rendered.lastIndexOf(USER) + USER.length);
  const callText = afterUser !== null && afterUser.includes(PROBE_TOOL) ? afterUser : null;
  const listed = attempt([user], { tools: [LISTED_SCHEMA], addGenerationPrompt: true });
  const reasoned = attempt([user, { role: 'assistant', content: 'Done.', reasoning_content: THOUGHT }]);
  const listsTools = listed?.includes(LISTED_TOOL) ?? false;
  const readsReasoning = reasoned?.includes(THOUGHT) ?? false;
  if (callText !== null) {
    const codec = chooseToolCallCodec(callText, hasToken);
    return { listsTools, rendersCalls: callText.includes(RESULT), callsAs: 'tool_calls', readsReasoning, codec };
  }
  // No tool_calls rendered: a template that lists tools and writes the assistant's text and the result as
  // given takes calls in the text, in the syntax its tool instructions name.
  const texted = listsTools
    ? attempt([user, { role: 'assistant', content: TEXT_CALL }, { role: 'tool', content: RESULT }])
    : null;
  const afterText = texted === null ? '' : texted.slice(texted.lastIndexOf(USER) + USER.length);
  const rendersText = afterText.includes(TEXT_CALL) && afterText.includes(RESULT);
  const codec = chooseToolCallCodec(null, hasToken, rendersText ? listed : null);
  return { listsTools, rendersCalls: rendersText, callsAs: rendersText ? 'text' : 'tool_calls', readsReasoning, codec };
}
