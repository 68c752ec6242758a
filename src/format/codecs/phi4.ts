/**
 * Phi-4-mini's tool calls: a JSON list of `{"name": …, "arguments": …}` objects between its
 * `<|tool_call|>` and `<|/tool_call|>` tokens (a single object, several blocks, and the `functools[…]`
 * spelling some of its outputs use are read too):
 *
 *   <|tool_call|>[{"name": "calc", "arguments": {"expression": "2+3"}}]<|/tool_call|>
 *
 * A block cut off at the end of the turn, or whose JSON does not read as calls, is `{ error, raw }`.
 */
import { parseLooseJson, scanJsonValue } from '../loose-json.ts';
import { callError, MAX_CALLS_PER_TURN, toCalls, tooManyCalls, type ParsedCall } from '../parse.ts';
import type { ToolCallCodec } from './codec.ts';
import { liftMarkedTurn, parseMarkedTurn, skipSpace, type ReadCalls } from './marked-turn.ts';

const CALL_OPEN = '<|tool_call|>';
const CALL_CLOSE = '<|/tool_call|>';
const SHAPE = 'expected <|tool_call|>[{"name": "<tool>", "arguments": {...}}]<|/tool_call|>';

function readPhiCalls(body: string, at: number): ReadCalls {
  const calls: ParsedCall[] = [];
  const errors: string[] = [];
  let pos = at;
  let end = at;
  while (body.startsWith(CALL_OPEN, pos)) {
    if (calls.length >= MAX_CALLS_PER_TURN) {
      errors.push(tooManyCalls(calls.length));
      return { calls, end: body.length, errors };
    }
    let p = skipSpace(body, pos + CALL_OPEN.length);
    if (body.startsWith('functools', p)) p = skipSpace(body, p + 'functools'.length);
    // scanJsonValue stops at the next tag (a `<` outside strings), so a broken block is scanned once.
    const close = body[p] === '[' || body[p] === '{' ? scanJsonValue(body, p) : -1;
    if (close === -1) {
      calls.push(
        callError(`invalid JSON in ${CALL_OPEN} (it is cut off or not JSON); ${SHAPE}`, body.slice(p, p + 500)),
      );
      return { calls, end: body.length, errors };
    }
    const raw = body.slice(p, close);
    const tried = parseLooseJson(raw);
    const read = tried.ok
      ? toCalls(tried.value, raw, SHAPE)
      : [callError(`invalid JSON in ${CALL_OPEN}: ${tried.error}; ${SHAPE}`, raw)];
    calls.push(...read.slice(0, MAX_CALLS_PER_TURN - calls.length));
    end = skipSpace(body, close);
    if (body.startsWith(CALL_CLOSE, end)) end += CALL_CLOSE.length;
    else end = close;
    const q = skipSpace(body, end);
    if (!body.startsWith(CALL_OPEN, q)) break;
    pos = q;
  }
  return { calls, end, errors };
}

export const PHI4_CALLS: ToolCallCodec = {
  family: 'phi4-mini',
  summary: 'Phi-4-mini: <|tool_call|>[{"name": …, "arguments": …}]<|/tool_call|>',
  fallback: false,
  argumentsAs: 'object',
  reasoningField: null,
  shows: CALL_OPEN,
  syntax: CALL_OPEN,
  tokens: [CALL_OPEN, CALL_CLOSE],
  parse: (text) => parseMarkedTurn(text, CALL_OPEN, readPhiCalls),
  lift: (content) => liftMarkedTurn(content, CALL_OPEN, readPhiCalls),
};
