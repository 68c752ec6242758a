/**
 * DeepSeek's tool calls, between its `<｜tool▁calls▁begin｜>` and `<｜tool▁calls▁end｜>` tokens, one
 * `<｜tool▁call▁begin｜>…<｜tool▁call▁end｜>` per call, in either of the family's two forms:
 *
 *   function<｜tool▁sep｜>calc\n```json\n{"expression": "2+3"}\n```     DeepSeek-V3, R1 and its distilled models
 *   calc<｜tool▁sep｜>{"expression": "2+3"}                              DeepSeek-V3.1
 *
 * Its templates write `arguments` into the text as the string they are given, so a lifted call carries
 * the arguments' JSON exactly as the model wrote it (argumentsAs 'text'). A call without a separator, cut
 * off at the end of the turn, or with arguments that are not a JSON object is `{ error, raw }`.
 */
import { callError, MAX_CALLS_PER_TURN, TagFinder, tooManyCalls, type ParsedCall } from '../parse.ts';
import type { ToolCallCodec } from './codec.ts';
import { functionName, liftMarkedTurn, namedCall, parseMarkedTurn, skipSpace, type ReadCalls } from './marked-turn.ts';

const CALLS_BEGIN = '<｜tool▁calls▁begin｜>';
const CALLS_END = '<｜tool▁calls▁end｜>';
const CALL_BEGIN = '<｜tool▁call▁begin｜>';
const CALL_END = '<｜tool▁call▁end｜>';
const SEP = '<｜tool▁sep｜>';
const SHAPE = 'expected <｜tool▁call▁begin｜>function<｜tool▁sep｜><tool>\\n```json\\n{...}\\n```<｜tool▁call▁end｜>';
/** V3's form after the separator: the name on its line, then the arguments in a json fence (its close may be cut off). */
const FENCED = /^([^\n]*)\n```(?:json)?\n([\s\S]*?)(?:\n```\s*)?$/;

/** One call's text between its begin and end tokens: the call, and its arguments' text as written. */
function readCall(text: string): { call: ParsedCall; argumentsText: string | null } {
  const sep = text.indexOf(SEP);
  if (sep === -1) return { call: callError(`the call has no ${SEP}; ${SHAPE}`, text), argumentsText: null };
  const left = text.slice(0, sep).trim();
  const right = text.slice(sep + SEP.length);
  const fenced = left === 'function' ? FENCED.exec(right) : null;
  const name = functionName(fenced ? fenced[1] : left);
  if (name === null) return { call: callError(`the call names no tool; ${SHAPE}`, text), argumentsText: null };
  const argumentsText = fenced ? fenced[2] : right;
  return { call: namedCall(name, argumentsText, SHAPE), argumentsText };
}

function readDeepSeekCalls(body: string, at: number): ReadCalls {
  const calls: ParsedCall[] = [];
  const argumentTexts: (string | null)[] = [];
  const errors: string[] = [];
  const tags = new TagFinder(body);
  let pos = at;
  let end = at;
  while (body.startsWith(CALL_BEGIN, pos)) {
    if (calls.length >= MAX_CALLS_PER_TURN) {
      errors.push(tooManyCalls(calls.length));
      return { calls, end: body.length, errors, argumentTexts };
    }
    const from = pos + CALL_BEGIN.length;
    // The call runs to its end token, or, cut off, to the next call or the end of the calls.
    const ends = [CALL_END, CALL_BEGIN, CALLS_END].map((t) => tags.next(t, from)).filter((i) => i !== -1);
    const stop = ends.length ? Math.min(...ends) : body.length;
    const read = readCall(body.slice(from, stop));
    calls.push(read.call);
    argumentTexts.push(read.argumentsText);
    end = body.startsWith(CALL_END, stop) ? stop + CALL_END.length : stop;
    let q = skipSpace(body, end);
    if (body.startsWith(CALLS_END, q)) {
      end = q + CALLS_END.length;
      q = skipSpace(body, end);
    }
    if (!body.startsWith(CALL_BEGIN, q)) break;
    pos = q;
  }
  return { calls, end, errors, argumentTexts };
}

export const DEEPSEEK_CALLS: ToolCallCodec = {
  family: 'deepseek',
  summary:
    'DeepSeek: <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜><tool> and its arguments in a json fence ' +
    "(V3.1's <tool><｜tool▁sep｜>{…} read too)",
  fallback: false,
  argumentsAs: 'text',
  reasoningField: null,
  shows: CALL_BEGIN,
  syntax: CALL_BEGIN,
  tokens: [CALLS_BEGIN, CALL_BEGIN, SEP],
  parse: (text) => parseMarkedTurn(text, CALL_BEGIN, readDeepSeekCalls, CALLS_BEGIN),
  lift: (content) => liftMarkedTurn(content, CALL_BEGIN, readDeepSeekCalls, { opener: CALLS_BEGIN }),
};
