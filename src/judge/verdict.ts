/**
 * Reads the verdict of the judges that reason first (the criteria rubric judge, the group judge): the
 * reply is free reasoning followed by a line `VERDICT: <JSON>`, and only the LAST such line counts — a
 * judge that changes its mind, or mentions a verdict while reasoning, is read by what it finally wrote.
 * The judged text went into the prompt with its own markers neutralised (neutralise.ts), so a verdict
 * quoted from the trajectory cannot be the one read here. Nothing that fails to parse becomes a score:
 * every failure is a null result with the reason.
 */
import { isUnitScore, noScore, type JudgeResult } from './types.ts';

/** `VERDICT:` opening a line, after list, quote or markdown marks (`- **VERDICT**: …`). */
const VERDICT_LINE = /^[ \t>*_#-]{0,8}verdict[ \t*_]{0,4}:/gim;

/** The reasoning kept as a rationale, cut to this many characters. */
const MAX_RATIONALE = 600;

export type VerdictRead = { ok: true; value: unknown; reasoning: string } | { ok: false; reason: string };

/** The end (exclusive) of the balanced JSON value opening at `start` (`{` or `[`), or -1. */
function balancedEnd(text: string, start: number): number {
  const stack: string[] = [];
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') stack.push(c === '{' ? '}' : ']');
    else if (c === '}' || c === ']') {
      if (stack.pop() !== c) return -1;
      if (stack.length === 0) return i + 1;
    }
  }
  return -1;
}

function preview(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(flat.length > 80 ? `${flat.slice(0, 80)}…` : flat);
}

/** The JSON after the reply's last `VERDICT:` line, and the reasoning before it. */
function readLastVerdict(reply: string): VerdictRead {
  const text = reply.replace(/\r\n?/g, '\n');
  let last: RegExpExecArray | null = null;
  for (const m of text.matchAll(VERDICT_LINE)) last = m as RegExpExecArray;
  if (!last) return { ok: false, reason: `the reply has no "VERDICT:" line: ${preview(text.slice(-200))}` };
  const after = text.slice(last.index + last[0].length);
  const open = after.search(/[{[]/);
  // Only blanks or a code fence may stand between the marker and the JSON.
  if (open === -1 || !/^[\s`]*(?:json)?[\s`]*$/i.test(after.slice(0, open))) {
    return { ok: false, reason: `the last VERDICT line holds no JSON: ${preview(after.split('\n')[0] ?? '')}` };
  }
  const end = balancedEnd(after, open);
  if (end === -1) return { ok: false, reason: `the last VERDICT's JSON is not closed: ${preview(after.slice(open))}` };
  let value: unknown;
  try {
    value = JSON.parse(after.slice(open, end));
  } catch (err) {
    return { ok: false, reason: `the last VERDICT's JSON does not parse (${(err as Error).message})` };
  }
  const reasoning = text
    .slice(0, last.index)
    .replace(/<\/?think>/g, '')
    .trim();
  return {
    ok: true,
    value,
    reasoning: reasoning.length > MAX_RATIONALE ? `…${reasoning.slice(-MAX_RATIONALE)}` : reasoning,
  };
}

/** 4, "4", "4/5" (with `scaleTo` 5 → 4; with another denominator, rescaled) → a number; else null. */
function readNumber(value: unknown, scaleTo: number): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string') return null;
  const m = /^\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+))\s*(?:\/\s*(\d+(?:\.\d*)?))?\s*$/.exec(value);
  if (!m) return null;
  const n = Number(m[1]);
  if (m[2] === undefined) return n;
  const d = Number(m[2]);
  return d > 0 ? (n / d) * scaleTo : null;
}

/** A criterion of a rubric judge: its name, what it asks, its weight in the score. */
export interface RubricCriterion {
  name: string;
  description: string;
  weight: number;
}

const normName = (s: string) =>
  s
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, ' ');

/**
 * A rubric verdict `{"<criterion name>": <points 0..scale>, …}` → the weighted score in [0, 1] and each
 * criterion as a dimension on 0–10 (the vote's scale for every judge). Keys match names case- and
 * spacing-insensitively, or the criterion's number (`"1"`, `"C1"`). A criterion without points, or with
 * points outside 0..scale, makes the whole verdict a null result: never a guessed 0.
 */
export function parseRubricVerdict(reply: string, criteria: readonly RubricCriterion[], scale: number): JudgeResult {
  const read = readLastVerdict(reply);
  if (!read.ok) return noScore(read.reason);
  const v = read.value;
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    return noScore('the last VERDICT is not a JSON object of criterion → points');
  const entries = Object.entries(v as Record<string, unknown>);
  const dimensions: Record<string, number> = {};
  const used = new Set<string>();
  let weighted = 0;
  let weights = 0;
  for (const [i, c] of criteria.entries()) {
    const hit =
      entries.find(([k]) => normName(k) === normName(c.name)) ??
      entries.find(([k]) => new RegExp(`^\\s*c?${i + 1}\\s*$`, 'i').test(k));
    if (!hit)
      return noScore(
        `the last VERDICT gives no points for criterion "${c.name}"`,
        Object.keys(dimensions).length ? { dimensions } : {},
      );
    used.add(hit[0]);
    const points = readNumber(hit[1], scale);
    if (points === null || points < 0 || points > scale) {
      return noScore(
        `the points for criterion "${c.name}" are ${JSON.stringify(hit[1])}, not a number from 0 to ${scale}`,
        Object.keys(dimensions).length ? { dimensions } : {},
      );
    }
    dimensions[c.name] = Math.round((points / scale) * 1000) / 100;
    weighted += c.weight * (points / scale);
    weights += c.weight;
  }
  const extra = entries.filter(([k]) => !used.has(k)).map(([k]) => k);
  const score = weights > 0 ? weighted / weights : null;
  if (score === null || !isUnitScore(score))
    return noScore('the rubric has no criterion with a positive weight', { dimensions });
  const note = extra.length ? ` (ignored unknown entries: ${extra.join(', ')})` : '';
  return { score, rationale: (read.reasoning || 'no reasoning given') + note, dimensions };
}

/**
 * A group verdict for `n` trajectories: `{"1": 0.8, "2": 0.1, …}` (keys `"1"`, `"T1"`, `"trajectory 1"`;
 * values a number in [0, 1], `"8/10"`, or `{"score": …}`), or an array of exactly `n` scores. Always `n`
 * results in trajectory order: a trajectory the verdict leaves out, or scores out of range, is a null
 * result with the reason (never a silent 0); entries for trajectories that do not exist are ignored.
 */
export function parseGroupVerdict(reply: string, n: number): JudgeResult[] {
  const read = readLastVerdict(reply);
  const all = (reason: string) => Array.from({ length: n }, () => noScore(reason));
  if (!read.ok) return all(read.reason);
  const v = read.value;
  const slots: (unknown | undefined)[] = new Array(n).fill(undefined);
  const ignored: string[] = [];
  if (Array.isArray(v)) {
    if (v.length !== n)
      return all(
        `the last VERDICT lists ${v.length} scores for ${n} trajectories; give one per trajectory, keyed by its number`,
      );
    v.forEach((x, i) => (slots[i] = x));
  } else if (typeof v === 'object' && v !== null) {
    for (const [key, value] of Object.entries(v as Record<string, unknown>)) {
      const m = /^\s*(?:t(?:rajectory)?[\s_#-]*)?(\d+)\s*$/i.exec(key);
      const k = m ? Number(m[1]) : NaN;
      if (!Number.isInteger(k) || k < 1 || k > n) ignored.push(key);
      else slots[k - 1] = value;
    }
  } else {
    return all('the last VERDICT is neither an object of trajectory number → score nor a list of scores');
  }
  const note = ignored.length ? ` (ignored entries for no trajectory: ${ignored.join(', ')})` : '';
  const reasoning = read.reasoning || 'no reasoning given';
  return slots.map((raw, i) => {
    if (raw === undefined) return noScore(`the group verdict gives no score for trajectory ${i + 1}${note}`);
    const explained =
      typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : null;
    const value = readNumber(explained ? explained.score : raw, 1);
    if (value === null || !isUnitScore(value))
      return noScore(
        `the group verdict's score for trajectory ${i + 1} is ${JSON.stringify(explained ? explained.score : raw)}, not a number in [0, 1]${note}`,
      );
    const why =
      explained && typeof explained.explanation === 'string'
        ? explained.explanation
        : explained && typeof explained.reason === 'string'
          ? explained.reason
          : '';
    return {
      score: value,
      rationale: `${why ? `${why} — ` : ''}trajectory ${i + 1} of ${n} in one group call. ${reasoning}${note}`.trim(),
    };
  });
}
