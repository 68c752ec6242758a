/**
 * FunctionGemma's tool calls (Gemma 3's function-calling model): one block per call,
 *
 *   <start_function_call>call:calc{expression:<escape>2+3<escape>}<end_function_call>
 *
 * with arguments in its own notation: bare keys, strings between `<escape>` tokens, numbers, true /
 * false / null, nested `{…}` and `[…]`. A bare word where a value belongs is read as that text. A call
 * cut off at the end of the turn, without a name or `{`, or with arguments that do not read, is
 * `{ error, raw }`. Linear in the turn; nesting past MAX_DEPTH is refused.
 */
import { callError, MAX_CALLS_PER_TURN, TagFinder, tooManyCalls, type ParsedCall } from '../parse.ts';
import type { ToolCallCodec } from './codec.ts';
import { functionName, liftMarkedTurn, parseMarkedTurn, skipSpace, type ReadCalls } from './marked-turn.ts';

const CALL_OPEN = '<start_function_call>';
const CALL_CLOSE = '<end_function_call>';
const ESCAPE = '<escape>';
const SHAPE = 'expected <start_function_call>call:<tool>{<argument>:<escape>text<escape>,…}<end_function_call>';
const MAX_DEPTH = 32;

class NotationError extends Error {}

/** A reader of FunctionGemma's argument notation over one call's text. */
class Notation {
  pos = 0;
  constructor(private readonly text: string) {}

  fail(what: string): never {
    throw new NotationError(
      `${what} at ${this.pos >= this.text.length ? 'the end (the call is cut off)' : `position ${this.pos}`}`,
    );
  }

  value(depth: number): unknown {
    if (depth > MAX_DEPTH) this.fail('nesting too deep');
    this.pos = skipSpace(this.text, this.pos);
    const t = this.text;
    if (t.startsWith(ESCAPE, this.pos)) {
      const from = this.pos + ESCAPE.length;
      const close = t.indexOf(ESCAPE, from);
      if (close === -1) this.fail('a string opened with <escape> is not closed');
      this.pos = close + ESCAPE.length;
      return t.slice(from, close);
    }
    if (t[this.pos] === '{') return this.object(depth);
    if (t[this.pos] === '[') return this.list(depth);
    // A number, a keyword, or a bare word: the text up to the next separator.
    const m = /[^,}\]]*/y;
    m.lastIndex = this.pos;
    const word = (m.exec(t)?.[0] ?? '').trim();
    if (word === '') this.fail('expected a value');
    this.pos = m.lastIndex;
    if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(word)) return Number(word);
    return word === 'true' ? true : word === 'false' ? false : word === 'null' ? null : word;
  }

  object(depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.pos++; // {
    for (;;) {
      this.pos = skipSpace(this.text, this.pos);
      if (this.text[this.pos] === '}') {
        this.pos++;
        return out;
      }
      const key = /(?:<escape>)?([A-Za-z_][\w.-]*)(?:<escape>)?\s*:/y;
      key.lastIndex = this.pos;
      const k = key.exec(this.text);
      if (!k) this.fail('expected <argument>:');
      this.pos = key.lastIndex;
      out[k[1]] = this.value(depth + 1);
      this.pos = skipSpace(this.text, this.pos);
      if (this.text[this.pos] === ',') this.pos++;
      else if (this.text[this.pos] !== '}') this.fail('expected , or }');
    }
  }

  list(depth: number): unknown[] {
    const out: unknown[] = [];
    this.pos++; // [
    for (;;) {
      this.pos = skipSpace(this.text, this.pos);
      if (this.text[this.pos] === ']') {
        this.pos++;
        return out;
      }
      out.push(this.value(depth + 1));
      this.pos = skipSpace(this.text, this.pos);
      if (this.text[this.pos] === ',') this.pos++;
      else if (this.text[this.pos] !== ']') this.fail('expected , or ]');
    }
  }
}

/** One call's text after `call:` (up to its closing tag or the next call): the call, or why it does not read. */
function readCall(text: string): ParsedCall {
  const brace = text.indexOf('{');
  const name = functionName(brace === -1 ? text : text.slice(0, brace));
  if (name === null) return callError(`the call names no tool before its {; ${SHAPE}`, text);
  if (brace === -1) return callError(`${name} has no {arguments}; ${SHAPE}`, text);
  const reader = new Notation(text.slice(brace));
  try {
    const args = reader.object(0);
    if (text.slice(brace + reader.pos).trim() !== '')
      return callError(`text after the arguments of ${name}; ${SHAPE}`, text);
    return { name, arguments: args };
  } catch (e) {
    if (!(e instanceof NotationError)) throw e;
    return callError(`the arguments of ${name} do not read: ${e.message}; ${SHAPE}`, text);
  }
}

function readGemmaCalls(body: string, at: number): ReadCalls {
  const calls: ParsedCall[] = [];
  const errors: string[] = [];
  const tags = new TagFinder(body);
  let pos = at;
  let end = at;
  while (body.startsWith(CALL_OPEN, pos)) {
    if (calls.length >= MAX_CALLS_PER_TURN) {
      errors.push(tooManyCalls(calls.length));
      return { calls, end: body.length, errors };
    }
    const from = pos + CALL_OPEN.length;
    // The call is the text up to its closing tag, or up to the next call when it has none.
    const close = tags.next(CALL_CLOSE, from);
    const next = tags.next(CALL_OPEN, from);
    const closed = close !== -1 && (next === -1 || close < next);
    const stop = closed ? close : next === -1 ? body.length : next;
    const text = body.slice(from, stop);
    const head = /^\s*call:/.exec(text);
    calls.push(
      head ? readCall(text.slice(head[0].length)) : callError(`the call does not start with call:; ${SHAPE}`, text),
    );
    end = closed ? close + CALL_CLOSE.length : stop;
    const q = skipSpace(body, end);
    if (!body.startsWith(CALL_OPEN, q)) break;
    pos = q;
  }
  return { calls, end, errors };
}

export const FUNCTION_GEMMA_CALLS: ToolCallCodec = {
  family: 'function-gemma',
  summary: 'FunctionGemma: <start_function_call>call:<tool>{<argument>:<escape>value<escape>}<end_function_call>',
  fallback: false,
  argumentsAs: 'object',
  reasoningField: null,
  shows: CALL_OPEN,
  syntax: CALL_OPEN,
  tokens: [CALL_OPEN, CALL_CLOSE],
  parse: (text) => parseMarkedTurn(text, CALL_OPEN, readGemmaCalls),
  lift: (content) => liftMarkedTurn(content, CALL_OPEN, readGemmaCalls),
};
