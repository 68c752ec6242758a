/**
 * Parse one assistant turn into its `<think>` text, its `<tool_call>` calls and the final answer.
 *
 * Tolerant by design, because the policy is a small model mid-training: several calls per turn,
 * single-quoted pseudo-JSON, raw newlines in strings, `arguments` given as a JSON string, OpenAI-style
 * `{"function": {...}}` objects, a last call without its closing tag, an unterminated `<think>`, a stray
 * `</think>` without its opening tag (templates that open the think block in the prompt), and calls written
 * inside the think block (interleaved thinking). A call that cannot be read becomes `{ error, raw }`
 * so the agent loop can answer it with an error observation the model learns from. Never throws.
 */
import { findObjectEnd, parseLooseJson } from './loose-json.ts';

export type ParsedCall = { name: string; arguments: Record<string, unknown> } | { error: string; raw: string };

export interface ParsedAssistant {
  /** Text of the `<think>` block(s), trimmed and joined by newlines; null when the turn has none. */
  thought: string | null;
  /** Calls in the order written; unreadable ones as `{ error, raw }`. */
  calls: ParsedCall[];
  /** Text outside think and tool-call blocks, trimmed ('' when there is none). */
  answer: string;
  /** One message per unreadable call, plus 'unterminated <think>' when the think block never closed. */
  errors: string[];
}

export function isCallError(call: ParsedCall): call is { error: string; raw: string } {
  return 'error' in call;
}

const THINK_OPEN = '<think>';
const THINK_CLOSE = '</think>';
const CALL_OPEN = '<tool_call>';
const CALL_CLOSE = '</tool_call>';
const EXPECTED_SHAPE = 'expected {"name":"<tool>","arguments":{...}}';
/** Raw text kept on a parse error; enough to show the model what it wrote. */
const MAX_RAW = 500;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function callError(error: string, raw: string): ParsedCall {
  return { error, raw: raw.length > MAX_RAW ? raw.slice(0, MAX_RAW) : raw };
}

/** Accepts Hermes `{name, arguments}`, `parameters`/`args` aliases and OpenAI `{function: {name, arguments}}`. */
function toCall(value: unknown, raw: string): ParsedCall {
  if (!isPlainObject(value)) return callError(`tool call is not a JSON object; ${EXPECTED_SHAPE}`, raw);
  const fn = isPlainObject(value.function) ? value.function : null;
  const name = value.name ?? value.tool_name ?? value.tool ?? fn?.name ?? value.function;
  if (typeof name !== 'string' || name.trim() === '') return callError(`tool call has no "name"; ${EXPECTED_SHAPE}`, raw);
  let args: unknown = value.arguments ?? value.parameters ?? value.args ?? fn?.arguments ?? {};
  if (typeof args === 'string') {
    const inner = args.trim() === '' ? { ok: true as const, value: {} } : parseLooseJson(args);
    if (!inner.ok) return callError(`"arguments" of ${name} is a string that is not JSON (${inner.error}); ${EXPECTED_SHAPE}`, raw);
    args = inner.value;
  }
  if (!isPlainObject(args)) return callError(`"arguments" of ${name} must be an object; ${EXPECTED_SHAPE}`, raw);
  return { name: name.trim(), arguments: args };
}

/** Several calls written as one JSON array inside one tag are accepted too. */
function toCalls(value: unknown, raw: string): ParsedCall[] {
  if (Array.isArray(value) && value.length > 0) return value.map((v) => toCall(v, raw));
  return [toCall(value, raw)];
}

interface CallBlock {
  calls: ParsedCall[];
  /** Index just past the block (closing tag included when present). */
  end: number;
}

/**
 * Read the call that starts at `start` (just after `<tool_call>`). The block ends at its closing tag, or,
 * when that is missing, where its JSON object ends; it never runs into the next `<tool_call>`.
 */
function readCallBlock(text: string, start: number): CallBlock {
  const nextOpen = text.indexOf(CALL_OPEN, start);
  const limit = nextOpen === -1 ? text.length : nextOpen;
  const closeAt = text.indexOf(CALL_CLOSE, start);
  const close = closeAt !== -1 && closeAt < limit ? closeAt : -1;

  // 1. The text between the tags, when both are there.
  const tagged = text.slice(start, close === -1 ? limit : close).trim();
  const direct = tagged === '' ? null : parseLooseJson(tagged);
  if (direct?.ok) return { calls: toCalls(direct.value, tagged), end: close === -1 ? limit : close + CALL_CLOSE.length };

  // 2. The balanced object at the start: survives trailing junk inside the tags and a closing tag
  //    written inside a string argument.
  let objStart = start;
  while (objStart < limit && /\s/.test(text[objStart])) objStart++;
  if (text[objStart] === '{' || text[objStart] === '[') {
    const objEnd = findObjectEnd(text, objStart, limit);
    if (objEnd !== -1) {
      const raw = text.slice(objStart, objEnd);
      const parsed = parseLooseJson(raw);
      if (parsed.ok) {
        const closeAfter = text.indexOf(CALL_CLOSE, objEnd);
        const end = closeAfter !== -1 && closeAfter < limit ? closeAfter + CALL_CLOSE.length : objEnd;
        return { calls: toCalls(parsed.value, raw), end };
      }
    }
  }

  const end = close === -1 ? limit : close + CALL_CLOSE.length;
  if (tagged === '') return { calls: [callError(`empty <tool_call>; ${EXPECTED_SHAPE}`, '')], end };
  const why = direct && !direct.ok ? direct.error : 'unreadable';
  const truncated = close === -1 ? ' (the call is cut off: no </tool_call> and the JSON is incomplete)' : '';
  return { calls: [callError(`invalid JSON in <tool_call>${truncated}: ${why}; ${EXPECTED_SHAPE}`, tagged)], end };
}

/** First occurrence of any of `needles` at or after `from`. */
function nextTag(text: string, from: number, needles: string[]): { tag: string; at: number } | null {
  let best: { tag: string; at: number } | null = null;
  for (const tag of needles) {
    const at = text.indexOf(tag, from);
    if (at !== -1 && (best === null || at < best.at)) best = { tag, at };
  }
  return best;
}

function joinParts(parts: string[]): string {
  return parts.map((p) => p.trim()).filter((p) => p !== '').join('\n');
}

export function parseAssistant(text: string): ParsedAssistant {
  const thoughtParts: string[] = [];
  let answerParts: string[] = [];
  const calls: ParsedCall[] = [];
  const errors: string[] = [];
  let sawThink = false;
  let inThink = false;
  let pos = 0;

  try {
    while (pos <= text.length) {
      const tags = inThink ? [THINK_CLOSE, CALL_OPEN] : [THINK_OPEN, THINK_CLOSE, CALL_OPEN];
      const next = nextTag(text, pos, tags);
      const target = inThink ? thoughtParts : answerParts;
      if (next === null) {
        target.push(text.slice(pos));
        if (inThink) errors.push('unterminated <think>: close it with </think> before the answer');
        break;
      }
      target.push(text.slice(pos, next.at));
      pos = next.at + next.tag.length;
      if (next.tag === THINK_OPEN) {
        sawThink = true;
        inThink = true;
      } else if (next.tag === THINK_CLOSE) {
        if (!inThink && !sawThink) {
          // `</think>` with no opening tag: the prompt opened the block, so what came before was thought.
          thoughtParts.push(...answerParts);
          answerParts = [];
        }
        sawThink = true;
        inThink = false;
      } else {
        const block = readCallBlock(text, pos);
        calls.push(...block.calls);
        pos = block.end;
      }
    }
  } catch (e) {
    // Defensive: the readers above are written not to throw; if one does, the turn is still recorded.
    errors.push(`parser failure: ${e instanceof Error ? e.message : String(e)}`);
  }

  for (const call of calls) if (isCallError(call)) errors.push(call.error);
  const answer = joinParts(answerParts).replaceAll(CALL_CLOSE, '').trim();
  return { thought: sawThink ? joinParts(thoughtParts) : null, calls, answer, errors };
}
