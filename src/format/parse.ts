/**
 * Parse one assistant turn into its `<think>` text, its `<tool_call>` calls and the final answer: the
 * Hermes format (Spindle's own, Qwen's, Hermes'). Llama's JSON calls are read by llama-calls.ts; which
 * one a model gets is its tool-call codec (tool-call-codec.ts).
 *
 * Tolerant by design, because the policy is a small model mid-training: several calls per turn,
 * single-quoted pseudo-JSON, raw newlines in strings, `arguments` given as a JSON string, OpenAI-style
 * `{"function": {...}}` objects, a last call without its closing tag, an unterminated `<think>`, a stray
 * `</think>` without its opening tag (templates that open the think block in the prompt), and calls written
 * inside the think block (interleaved thinking). A call that cannot be read becomes `{ error, raw }`
 * so the agent loop can answer it with an error observation the model learns from. Never throws, runs
 * in time linear in the text, and reads at most MAX_CALLS_PER_TURN calls.
 */
import { parseLooseJson, scanJsonValue, type LooseJsonResult } from './loose-json.ts';

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
const IN_THINK_TAGS = [THINK_CLOSE, CALL_OPEN];
const OUTSIDE_TAGS = [THINK_OPEN, THINK_CLOSE, CALL_OPEN];
const BLOCK_ENDS = [CALL_CLOSE, CALL_OPEN];
const EXPECTED_SHAPE = 'expected {"name":"<tool>","arguments":{...}}';
/** Raw text kept on a parse error; enough to show the model what it wrote. */
const MAX_RAW = 500;
/** Calls read from one turn; the rest of a turn past this is not read (each call costs a tool run). */
export const MAX_CALLS_PER_TURN = 64;
export const UNTERMINATED_THINK = 'unterminated <think>: close it with </think> before the answer';

/** The error of a turn whose calls past MAX_CALLS_PER_TURN were not read (`read` were). */
export function tooManyCalls(read: number): string {
  return `too many tool calls: a turn may make at most ${MAX_CALLS_PER_TURN}; the text from call ${read + 1} on was not read`;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function callError(error: string, raw: string): ParsedCall {
  return { error, raw: raw.length > MAX_RAW ? raw.slice(0, MAX_RAW) : raw };
}

/**
 * Accepts Hermes `{name, arguments}`, `parameters`/`args` aliases (Llama's calls use `parameters`) and
 * OpenAI `{function: {name, arguments}}`; `shape` is the form an error message asks for.
 */
function toCall(value: unknown, raw: string, shape = EXPECTED_SHAPE): ParsedCall {
  if (!isPlainObject(value)) return callError(`tool call is not a JSON object; ${shape}`, raw);
  const fn = isPlainObject(value.function) ? value.function : null;
  const name = value.name ?? value.tool_name ?? value.tool ?? fn?.name ?? value.function;
  if (typeof name !== 'string' || name.trim() === '') return callError(`tool call has no "name"; ${shape}`, raw);
  let args: unknown = value.arguments ?? value.parameters ?? value.args ?? fn?.arguments ?? {};
  if (typeof args === 'string') {
    const inner = args.trim() === '' ? { ok: true as const, value: {} } : parseLooseJson(args);
    if (!inner.ok)
      return callError(`"arguments" of ${name} is a string that is not JSON (${inner.error}); ${shape}`, raw);
    args = inner.value;
  }
  if (!isPlainObject(args)) return callError(`"arguments" of ${name} must be an object; ${shape}`, raw);
  return { name: name.trim(), arguments: args };
}

/** Several calls written as one JSON array (inside one tag) are accepted too. */
export function toCalls(value: unknown, raw: string, shape = EXPECTED_SHAPE): ParsedCall[] {
  if (Array.isArray(value) && value.length > 0) return value.map((v) => toCall(v, raw, shape));
  return [toCall(value, raw, shape)];
}

interface CallBlock {
  calls: ParsedCall[];
  /** Index just past the block (closing tag included when present). */
  end: number;
}

/**
 * Next occurrence of each tag, remembered: the parser only moves forward, so a remembered position
 * (or a remembered "none") stays right until the parser passes it. Without this, every tag would be
 * searched to the end of the text again at every step, quadratic in the length of the turn.
 */
export class TagFinder {
  private readonly memo = new Map<string, { from: number; at: number }>();
  constructor(private readonly text: string) {}

  next(tag: string, from: number): number {
    const m = this.memo.get(tag);
    if (m && from >= m.from && (m.at === -1 || m.at >= from)) return m.at;
    const at = this.text.indexOf(tag, from);
    this.memo.set(tag, { from, at });
    return at;
  }

  /** First occurrence of any of `tags` at or after `from`. */
  first(tags: readonly string[], from: number): { tag: string; at: number } | null {
    let best: { tag: string; at: number } | null = null;
    for (const tag of tags) {
      const at = this.next(tag, from);
      if (at !== -1 && (best === null || at < best.at)) best = { tag, at };
    }
    return best;
  }
}

/**
 * Read the call that starts at `start` (just after `<tool_call>`). A JSON payload is delimited by its own
 * brackets, read string-aware, so tags written inside its string arguments are text, not tags. Without
 * a complete payload the block ends at its closing tag or, when that is missing, before the next
 * `<tool_call>`. A payload's scan stops at the first `<` outside its strings, and tag positions are
 * remembered, so a turn parses in linear time whatever it repeats.
 */
function readCallBlock(text: string, start: number, tags: TagFinder): CallBlock {
  let objStart = start;
  while (objStart < text.length && /\s/.test(text[objStart])) objStart++;
  let tried: LooseJsonResult | null = null;
  if (text[objStart] === '{' || text[objStart] === '[') {
    const objEnd = scanJsonValue(text, objStart);
    if (objEnd !== -1) {
      const raw = text.slice(objStart, objEnd);
      tried = parseLooseJson(raw);
      if (tried.ok) {
        // Junk between the payload and its closing tag is dropped; a closing tag after the next call is not ours.
        const close = tags.next(CALL_CLOSE, objEnd);
        const open = tags.next(CALL_OPEN, objEnd);
        const end = close !== -1 && (open === -1 || close < open) ? close + CALL_CLOSE.length : objEnd;
        return { calls: toCalls(tried.value, raw), end };
      }
    }
  }

  // No readable payload: the block is the text up to its closing tag or the next call.
  const next = tags.first(BLOCK_ENDS, start);
  const close = next?.tag === CALL_CLOSE ? next.at : -1;
  const limit = next === null ? text.length : next.at;
  const end = close === -1 ? limit : close + CALL_CLOSE.length;
  const tagged = text.slice(start, limit).trim();
  if (tagged === '') return { calls: [callError(`empty <tool_call>; ${EXPECTED_SHAPE}`, '')], end };
  tried ??= parseLooseJson(tagged);
  if (tried.ok) return { calls: toCalls(tried.value, tagged), end };
  const truncated = close === -1 ? ' (the call is cut off: no </tool_call> and the JSON is incomplete)' : '';
  return {
    calls: [callError(`invalid JSON in <tool_call>${truncated}: ${tried.error}; ${EXPECTED_SHAPE}`, tagged)],
    end,
  };
}

function joinParts(parts: string[]): string {
  return parts
    .map((p) => p.trim())
    .filter((p) => p !== '')
    .join('\n');
}

export function parseAssistant(text: string): ParsedAssistant {
  let thoughtParts: string[] = [];
  let answerParts: string[] = [];
  const calls: ParsedCall[] = [];
  const errors: string[] = [];
  let sawThink = false;
  let inThink = false;
  let pos = 0;
  const finder = new TagFinder(text);

  try {
    while (pos <= text.length) {
      const next = finder.first(inThink ? IN_THINK_TAGS : OUTSIDE_TAGS, pos);
      const target = inThink ? thoughtParts : answerParts;
      if (next === null) {
        target.push(text.slice(pos));
        if (inThink) errors.push(UNTERMINATED_THINK);
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
          thoughtParts = answerParts;
          answerParts = [];
        }
        sawThink = true;
        inThink = false;
      } else {
        if (calls.length >= MAX_CALLS_PER_TURN) {
          errors.push(tooManyCalls(calls.length));
          break;
        }
        const block = readCallBlock(text, pos, finder);
        for (const call of block.calls.slice(0, MAX_CALLS_PER_TURN - calls.length)) calls.push(call);
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
