/**
 * Llama 3.1 / 3.2 tool calls. Their template tells the model to answer a call with a JSON object as the
 * whole assistant message, `{"name": "calc", "parameters": {"expression": "2+3"}}`, and models sometimes
 * put `<|python_tag|>` (Llama's tag for code-interpreter calls) in front. Several calls may follow one
 * another, separated by `;`, commas or whitespace, or as one JSON array (vLLM's llama3_json parser reads
 * the same forms); Llama's own template renders only one call per turn and raises on more, which the
 * agent loop turns into a step error.
 *
 * A turn is a call attempt when it starts (after an optional leading `<think>` block, which Spindle's
 * system prompt asks for) with the tag or with a JSON object naming a function. An attempt that does not
 * read becomes `{ error, raw }` like a broken Hermes call, so the model learns from it; any other text,
 * JSON without a "name" included, is the answer. Never throws; linear in the text.
 */
import { parseLooseJson, scanJsonValue } from './loose-json.ts';
import {
  MAX_CALLS_PER_TURN,
  UNTERMINATED_THINK,
  callError,
  isCallError,
  tooManyCalls,
  toCalls,
  type ParsedAssistant,
  type ParsedCall,
} from './parse.ts';

export const PYTHON_TAG = '<|python_tag|>';
const THINK_OPEN = '<think>';
const THINK_CLOSE = '</think>';
const EXPECTED_SHAPE = 'expected {"name": "<tool>", "parameters": {...}} as the whole message';
/** An object (or a list of them) that opens by naming a function: what makes untagged JSON a call attempt rather than an answer. */
const NAMES_A_FUNCTION = /^\[?\s*\{\s*["']?name["']?\s*:/;

interface ReadCalls {
  calls: ParsedCall[];
  /** Text after the calls (trimmed); '' when the calls are the whole message. */
  rest: string;
  errors: string[];
}

/** The calls at the start of `body` (which starts with `{` or `[`), one JSON value after another. */
function readCalls(body: string): ReadCalls {
  const calls: ParsedCall[] = [];
  const errors: string[] = [];
  let pos = 0;
  while (pos < body.length) {
    if (calls.length >= MAX_CALLS_PER_TURN) {
      errors.push(tooManyCalls(calls.length));
      return { calls, rest: '', errors };
    }
    const end = scanJsonValue(body, pos);
    if (end === -1) {
      // Cut off (or broken by a bare `<`): the rest of the message is one unreadable call.
      const raw = body.slice(pos).trim();
      const tried = parseLooseJson(raw);
      calls.push(
        tried.ok
          ? toCalls(tried.value, raw, EXPECTED_SHAPE)[0]
          : callError(
              `invalid JSON in the tool call (it is cut off or not JSON): ${tried.error}; ${EXPECTED_SHAPE}`,
              raw,
            ),
      );
      return { calls, rest: '', errors };
    }
    const raw = body.slice(pos, end);
    const tried = parseLooseJson(raw);
    const read = tried.ok
      ? toCalls(tried.value, raw, EXPECTED_SHAPE)
      : [callError(`invalid JSON in the tool call: ${tried.error}; ${EXPECTED_SHAPE}`, raw)];
    for (const call of read.slice(0, MAX_CALLS_PER_TURN - calls.length)) calls.push(call);
    pos = end;
    // Between calls: whitespace and one separator; anything else ends the calls.
    let next = pos;
    while (next < body.length && /[\s;,]/.test(body[next])) next++;
    if (body[next] !== '{' && body[next] !== '[') break;
    pos = next;
  }
  return { calls, rest: body.slice(pos).trim(), errors };
}

/** A leading `<think>…</think>` block: the thought and the text after it; the whole turn is thought when it never closes. */
function splitThink(text: string): { thought: string | null; body: string; unterminated: boolean } {
  const start = text.search(/\S/);
  if (start < 0 || !text.startsWith(THINK_OPEN, start)) return { thought: null, body: text, unterminated: false };
  const close = text.indexOf(THINK_CLOSE, start);
  if (close < 0) return { thought: text.slice(start + THINK_OPEN.length).trim(), body: '', unterminated: true };
  return {
    thought: text.slice(start + THINK_OPEN.length, close).trim(),
    body: text.slice(close + THINK_CLOSE.length),
    unterminated: false,
  };
}

export function parseLlamaAssistant(text: string): ParsedAssistant {
  const { thought, body: afterThink, unterminated } = splitThink(text);
  const errors = unterminated ? [UNTERMINATED_THINK] : [];
  let body = afterThink.trim();
  const tagged = body.startsWith(PYTHON_TAG);
  if (tagged) body = body.slice(PYTHON_TAG.length).trim();
  if (!tagged && !NAMES_A_FUNCTION.test(body)) return { thought, calls: [], answer: body, errors };
  if (!body.startsWith('{') && !body.startsWith('[')) {
    const error = `${PYTHON_TAG} is followed by no JSON; ${EXPECTED_SHAPE}`;
    return { thought, calls: [callError(error, body)], answer: '', errors: [...errors, error] };
  }
  const read = readCalls(body);
  for (const call of read.calls) if (isCallError(call)) read.errors.push(call.error);
  return { thought, calls: read.calls, answer: read.rest, errors: [...errors, ...read.errors] };
}

/**
 * The turn's calls in the form Llama's template writes them back (`{"name": …, "parameters": …}` and
 * nothing else, no tag, no thought), or null when the turn must reach the template as written: the
 * template renders a `tool_calls` turn as the bare JSON, so lifting anything more would change the text.
 */
export function liftLlamaCalls(
  content: string,
): { content: string; calls: { name: string; arguments: Record<string, unknown> }[] } | null {
  const body = content.trim();
  if (!NAMES_A_FUNCTION.test(body)) return null;
  const parsed = parseLlamaAssistant(body);
  if (parsed.calls.length === 0 || parsed.thought !== null || parsed.answer !== '' || parsed.errors.length > 0)
    return null;
  return { content: '', calls: parsed.calls.flatMap((c) => (isCallError(c) ? [] : [c])) };
}
