/**
 * What the tag-style call formats share (Mistral's `[TOOL_CALLS]`, Qwen3-Coder's `<tool_call><function=…>`,
 * FunctionGemma's `<start_function_call>`, Phi-4-mini's `<|tool_call|>`, DeepSeek's `<｜tool▁calls▁begin｜>`):
 * a turn is an optional think block, text, then calls that open with the family's marker, maybe text after
 * them. Each family reads its own calls (`readCalls`); the think block, the answer and the lift are here.
 *
 * Tolerant as parse.ts is: a think block left open ends at the first call, a `</think>` without its opening
 * tag (a template that opened the block in the prompt) makes what came before it the thought. Every
 * search moves forward, so a turn is read in time linear in its length.
 */
import { parseLooseJson } from '../loose-json.ts';
import { callError, isCallError, UNTERMINATED_THINK, type ParsedAssistant, type ParsedCall } from '../parse.ts';
import type { LiftedTurn } from './codec.ts';

const THINK_OPEN = '<think>';
const THINK_CLOSE = '</think>';

export interface ReadCalls {
  calls: ParsedCall[];
  /** Index just past the last call read. */
  end: number;
  /** Messages beside the calls' own (too many calls). */
  errors: string[];
  /** Per call, its arguments' JSON as written, where a template takes that text (DeepSeek's). */
  argumentTexts?: (string | null)[];
}

/** A turn's thought and the text after it; `marker` ends a think block left open. */
function splitThought(text: string, marker: string): { thought: string | null; body: string; unterminated: boolean } {
  const start = text.search(/\S/);
  if (start >= 0 && text.startsWith(THINK_OPEN, start)) {
    const open = start + THINK_OPEN.length;
    const close = text.indexOf(THINK_CLOSE, open);
    if (close >= 0)
      return {
        thought: text.slice(open, close).trim(),
        body: text.slice(close + THINK_CLOSE.length),
        unterminated: false,
      };
    const call = text.indexOf(marker, open);
    return call >= 0
      ? { thought: text.slice(open, call).trim(), body: text.slice(call), unterminated: true }
      : { thought: text.slice(open).trim(), body: '', unterminated: true };
  }
  const close = text.indexOf(THINK_CLOSE);
  const call = text.indexOf(marker);
  if (close >= 0 && (call < 0 || close < call)) {
    return { thought: text.slice(0, close).trim(), body: text.slice(close + THINK_CLOSE.length), unterminated: false };
  }
  return { thought: null, body: text, unterminated: false };
}

/**
 * Where the calls begin: at the first `marker`, or at the `opener` that wraps them when one is written
 * just before it (Qwen3-Coder's `<tool_call>` around `<function=…>`, DeepSeek's `<｜tool▁calls▁begin｜>`).
 */
function callsStart(body: string, at: number, opener: string | undefined): number {
  if (!opener) return at;
  let k = at;
  while (k > 0 && /\s/.test(body[k - 1])) k--;
  return k >= opener.length && body.startsWith(opener, k - opener.length) ? k - opener.length : at;
}

/** The turn's thought, its calls (read from the first `marker` on) and the text outside them. Never throws. */
export function parseMarkedTurn(
  text: string,
  marker: string,
  readCalls: (body: string, at: number) => ReadCalls,
  opener?: string,
): ParsedAssistant {
  const { thought, body, unterminated } = splitThought(text, marker);
  const errors = unterminated ? [UNTERMINATED_THINK] : [];
  const at = body.indexOf(marker);
  if (at < 0) return { thought, calls: [], answer: body.trim(), errors };
  let read: ReadCalls;
  try {
    read = readCalls(body, at);
  } catch (e) {
    // Defensive: the readers are written not to throw; if one does, the turn is still recorded.
    return {
      thought,
      calls: [],
      answer: body.trim(),
      errors: [...errors, `parser failure: ${e instanceof Error ? e.message : String(e)}`],
    };
  }
  const callErrors = read.calls.flatMap((c) => (isCallError(c) ? [c.error] : []));
  const answer = [body.slice(0, callsStart(body, at, opener)), body.slice(read.end)]
    .map((p) => p.trim())
    .filter((p) => p !== '')
    .join('\n');
  return { thought, calls: read.calls, answer, errors: [...errors, ...read.errors, ...callErrors] };
}

/**
 * The turn as its template takes it: the text before the first call (as written, or trimmed where the
 * family's template trims it) and the calls; null unless every call reads and nothing follows them, so
 * nothing the model wrote is lost when the template writes the calls back.
 */
export function liftMarkedTurn(
  content: string,
  marker: string,
  readCalls: (body: string, at: number) => ReadCalls,
  opts: { trim?: boolean; opener?: string } = {},
): LiftedTurn | null {
  const at = content.indexOf(marker);
  if (at < 0) return null;
  const read = readCalls(content, at);
  if (
    read.calls.length === 0 ||
    read.errors.length > 0 ||
    read.calls.some(isCallError) ||
    content.slice(read.end).trim() !== ''
  )
    return null;
  const before = content.slice(0, callsStart(content, at, opts.opener));
  const calls = read.calls.flatMap((c, i) => {
    if (isCallError(c)) return [];
    const text = read.argumentTexts?.[i];
    return [text == null ? c : { ...c, argumentsText: text }];
  });
  return { content: opts.trim ? before.trim() : before, calls };
}

/** A function name as the formats write it (letters, digits, `_`, `-`, `.`), or null. */
export function functionName(text: string): string | null {
  const name = text.trim();
  return /^[A-Za-z_][\w.-]{0,127}$/.test(name) ? name : null;
}

/** A call whose name stands apart from its JSON arguments (`name[ARGS]{…}`, `name<｜tool▁sep｜>{…}`). */
export function namedCall(name: string, raw: string, shape: string): ParsedCall {
  const body = raw.trim();
  if (body === '') return { name, arguments: {} };
  const tried = parseLooseJson(body);
  if (!tried.ok) return callError(`invalid JSON in the arguments of ${name}: ${tried.error}; ${shape}`, raw);
  const args = tried.value;
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return callError(`the arguments of ${name} must be a JSON object; ${shape}`, raw);
  }
  return { name, arguments: args as Record<string, unknown> };
}

/** Index of the first character at or after `pos` that is not whitespace. */
export function skipSpace(text: string, pos: number): number {
  while (pos < text.length && /\s/.test(text[pos])) pos++;
  return pos;
}
