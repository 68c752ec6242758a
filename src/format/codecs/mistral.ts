/**
 * Mistral / Ministral tool calls, after the `[TOOL_CALLS]` token. Two forms, both read:
 *
 *   [TOOL_CALLS]calc[ARGS]{"expression": "2+3"}          Mistral Small 3.2, Magistral, Ministral 3, Devstral
 *                                                        (one `[TOOL_CALLS]` per call; `[CALL_ID]id` may sit before `[ARGS]`)
 *   [TOOL_CALLS][{"name": "calc", "arguments": {…}}]     Mistral 7B v0.3, Nemo, Ministral-8B-2410 (a JSON list, maybe with ids)
 *
 * The turn's text before the first `[TOOL_CALLS]` is its content. A call cut off at the end of the turn,
 * a name without `[ARGS]`, or arguments that are not a JSON object become `{ error, raw }`, so the model
 * learns from them. Lifted into `tool_calls` is the first form only: that is what the templates write
 * back (`[TOOL_CALLS]` + name + `[ARGS]` + arguments as JSON); a JSON-list turn reaches the template as written.
 */
import { parseLooseJson, scanJsonValue } from '../loose-json.ts';
import { callError, MAX_CALLS_PER_TURN, TagFinder, toCalls, tooManyCalls, type ParsedCall } from '../parse.ts';
import type { ToolCallCodec } from './codec.ts';
import { functionName, liftMarkedTurn, namedCall, parseMarkedTurn, skipSpace, type ReadCalls } from './marked-turn.ts';

const TOOL_CALLS = '[TOOL_CALLS]';
const ARGS = '[ARGS]';
const CALL_ID = '[CALL_ID]';
const SHAPE = 'expected [TOOL_CALLS]<tool>[ARGS]{"<argument>": <value>}';

/** The calls from `at` (a `[TOOL_CALLS]`) on; `jsonList` says whether any was written in the JSON-list form. */
function readMistralCalls(body: string, at: number): ReadCalls & { jsonList: boolean } {
  const calls: ParsedCall[] = [];
  const errors: string[] = [];
  let jsonList = false;
  let pos = at;
  let end = at;
  const tags = new TagFinder(body);
  while (body.startsWith(TOOL_CALLS, pos)) {
    if (calls.length >= MAX_CALLS_PER_TURN) {
      errors.push(tooManyCalls(calls.length));
      return { calls, end: body.length, errors, jsonList };
    }
    const p = skipSpace(body, pos + TOOL_CALLS.length);
    if (body[p] === '[' || body[p] === '{') {
      jsonList = true;
      const close = scanJsonValue(body, p);
      if (close === -1) {
        calls.push(callError(`invalid JSON after ${TOOL_CALLS} (it is cut off or not JSON); ${SHAPE}`, body.slice(p)));
        return { calls, end: body.length, errors, jsonList };
      }
      const raw = body.slice(p, close);
      const tried = parseLooseJson(raw);
      const read = tried.ok
        ? toCalls(tried.value, raw, SHAPE)
        : [callError(`invalid JSON after ${TOOL_CALLS}: ${tried.error}; ${SHAPE}`, raw)];
      calls.push(...read.slice(0, MAX_CALLS_PER_TURN - calls.length));
      end = close;
    } else {
      // This call's region ends at the next [TOOL_CALLS]: every search and scan below stays inside it, so a
      // turn of many broken calls is still read in linear time.
      const next = tags.next(TOOL_CALLS, p);
      const stop = next === -1 ? body.length : next;
      const region = body.slice(p, stop);
      const args = region.indexOf(ARGS);
      const idAt = args === -1 ? -1 : region.slice(0, args).indexOf(CALL_ID);
      const name = args === -1 ? null : functionName(region.slice(0, idAt === -1 ? args : idAt));
      const from = args === -1 ? -1 : skipSpace(region, args + ARGS.length);
      const close = from !== -1 && region[from] === '{' ? scanJsonValue(region, from) : -1;
      if (args === -1) calls.push(callError(`${TOOL_CALLS} without ${ARGS}; ${SHAPE}`, region));
      else if (name === null) calls.push(callError(`the tool name before ${ARGS} is not a name; ${SHAPE}`, region));
      else if (close === -1)
        calls.push(callError(`the arguments of ${name} are cut off or not a JSON object; ${SHAPE}`, region));
      else calls.push(namedCall(name, region.slice(from, close), SHAPE));
      end = close === -1 || name === null ? stop : p + close;
    }
    const q = skipSpace(body, end);
    if (!body.startsWith(TOOL_CALLS, q)) break;
    pos = q;
  }
  return { calls, end, errors, jsonList };
}

export const MISTRAL_CALLS: ToolCallCodec = {
  family: 'mistral',
  summary:
    'Mistral: [TOOL_CALLS]<tool>[ARGS]{…} per call (the older [TOOL_CALLS][{"name": …, "arguments": …}] list read too)',
  fallback: false,
  argumentsAs: 'object',
  reasoningField: null,
  shows: TOOL_CALLS,
  syntax: TOOL_CALLS,
  tokens: [TOOL_CALLS],
  parse: (text) => parseMarkedTurn(text, TOOL_CALLS, readMistralCalls),
  lift: (content) => {
    const at = content.indexOf(TOOL_CALLS);
    if (at === -1 || readMistralCalls(content, at).jsonList) return null;
    return liftMarkedTurn(content, TOOL_CALLS, readMistralCalls);
  },
};
