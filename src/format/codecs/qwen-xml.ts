/**
 * Qwen3-Coder's XML tool calls: each call a `<function=name>` with one `<parameter=key>` per argument,
 * the value on its own lines, inside `<tool_call>` tags:
 *
 *   <tool_call>
 *   <function=calc>
 *   <parameter=expression>
 *   2+3
 *   </parameter>
 *   </function>
 *   </tool_call>
 *
 * A value is the text between the tags, less the one newline the template writes on each side; one that
 * reads as a JSON object or list is that value (the template writes those as JSON), every other value is
 * its text (Spindle's tools take strings; numbers arrive as their digits). The `<tool_call>` wrapper may be
 * left out, and the last call may be cut off anywhere: what was written of it is the call. A parameter
 * name that is not a name, or a call with no function name, is `{ error, raw }`. Linear in the turn.
 */
import { parseLooseJson } from '../loose-json.ts';
import { callError, MAX_CALLS_PER_TURN, TagFinder, tooManyCalls, type ParsedCall } from '../parse.ts';
import type { ToolCallCodec } from './codec.ts';
import { functionName, liftMarkedTurn, parseMarkedTurn, skipSpace, type ReadCalls } from './marked-turn.ts';

const CALL_OPEN = '<tool_call>';
const CALL_CLOSE = '</tool_call>';
const FUNCTION = '<function=';
const FUNCTION_CLOSE = '</function>';
const PARAMETER = '<parameter=';
const PARAMETER_CLOSE = '</parameter>';
const SHAPE =
  'expected <function=<tool>> then <parameter=<argument>>value</parameter> for each argument, then </function>';

/** A parameter's text as the template writes it (one newline each side), read back to its value. */
function parameterValue(text: string): unknown {
  const value = text.replace(/^\n/, '').replace(/\n$/, '');
  const t = value.trim();
  if (t.startsWith('{') || t.startsWith('[')) {
    const tried = parseLooseJson(t);
    if (tried.ok && typeof tried.value === 'object' && tried.value !== null) return tried.value;
  }
  return value;
}

/** The text of `<tag=name>`: the name, and the index past the `>`; null when the tag does not close within a name's length. */
function tagName(body: string, from: number): { name: string | null; end: number } | null {
  const close = body.slice(from, from + 130).indexOf('>');
  if (close === -1) return null;
  return { name: functionName(body.slice(from, from + close)), end: from + close + 1 };
}

function readXmlCalls(body: string, at: number): ReadCalls {
  const calls: ParsedCall[] = [];
  const errors: string[] = [];
  const tags = new TagFinder(body);
  let pos = at;
  let end = at;
  while (body.startsWith(FUNCTION, pos)) {
    if (calls.length >= MAX_CALLS_PER_TURN) {
      errors.push(tooManyCalls(calls.length));
      return { calls, end: body.length, errors };
    }
    const head = tagName(body, pos + FUNCTION.length);
    if (head === null || head.name === null) {
      const next = tags.next(FUNCTION, pos + FUNCTION.length);
      const stop = next === -1 ? body.length : next;
      calls.push(callError(`<function=…> names no tool; ${SHAPE}`, body.slice(pos, stop)));
      end = stop;
      if (next === -1) break;
      pos = next;
      continue;
    }
    const args: Record<string, unknown> = {};
    let bad: string | null = null;
    let p = head.end;
    for (;;) {
      p = skipSpace(body, p);
      if (body.startsWith(PARAMETER, p)) {
        const key = tagName(body, p + PARAMETER.length);
        if (key === null || key.name === null) {
          bad = `a <parameter=…> of ${head.name} has no name`;
          break;
        }
        // The value runs to its closing tag, or, cut off, to the next tag that ends it.
        const ends = [PARAMETER_CLOSE, PARAMETER, FUNCTION_CLOSE, FUNCTION]
          .map((t) => tags.next(t, key.end))
          .filter((i) => i !== -1);
        const valueEnd = ends.length ? Math.min(...ends) : body.length;
        args[key.name] = parameterValue(body.slice(key.end, valueEnd));
        p = body.startsWith(PARAMETER_CLOSE, valueEnd) ? valueEnd + PARAMETER_CLOSE.length : valueEnd;
      } else {
        if (body.startsWith(FUNCTION_CLOSE, p)) p += FUNCTION_CLOSE.length;
        break;
      }
    }
    if (bad !== null) {
      const next = tags.next(FUNCTION, p);
      const stop = next === -1 ? body.length : next;
      calls.push(callError(`${bad}; ${SHAPE}`, body.slice(pos, stop)));
      end = stop;
      if (next === -1) break;
      pos = next;
      continue;
    }
    calls.push({ name: head.name, arguments: args });
    let q = skipSpace(body, p);
    if (body.startsWith(CALL_CLOSE, q)) q = skipSpace(body, q + CALL_CLOSE.length);
    end = q;
    if (body.startsWith(CALL_OPEN, q)) q = skipSpace(body, q + CALL_OPEN.length);
    if (!body.startsWith(FUNCTION, q)) break;
    pos = q;
  }
  return { calls, end, errors };
}

export const QWEN_XML_CALLS: ToolCallCodec = {
  family: 'qwen3-coder',
  summary:
    'Qwen3-Coder XML: <tool_call><function=<tool>><parameter=<argument>>value</parameter></function></tool_call>',
  fallback: false,
  argumentsAs: 'object',
  reasoningField: null,
  shows: FUNCTION,
  syntax: FUNCTION,
  tokens: [],
  parse: (text) => parseMarkedTurn(text, FUNCTION, readXmlCalls, CALL_OPEN),
  // The template writes the content trimmed, then each call on lines of its own.
  lift: (content) => liftMarkedTurn(content, FUNCTION, readXmlCalls, { trim: true, opener: CALL_OPEN }),
};
