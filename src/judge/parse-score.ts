/**
 * Reads a rubric judge's reply: JSON first (a bare object, or one inside a code fence or prose), then
 * tolerant text ("Overall: 0.8", "overall score = 7/10"). Anything that gives no score in [0, 1] is a
 * null result with the reason, never a guessed 0.
 */
import { RUBRIC_DIMENSIONS } from './rubric-dimensions.ts';
import { isUnitScore, noScore, type JudgeResult } from './types.ts';

const OVERALL_KEYS = ['overall', 'overall_score', 'score', 'final_score', 'total'];

/** Candidate objects tried per reply: each is a JSON.parse of up to the whole reply, so they are counted. */
const MAX_CANDIDATES = 16;
/** Scans of the reply for candidates: a stray `{` in prose gets the scan restarted after it, a few times. */
const MAX_SCANS = 3;

/**
 * Balanced `{…}` spans in the text, outermost first, skipping braces inside strings; at most
 * MAX_CANDIDATES. One pass records every span it closes, so the work is linear in the reply (a scan per
 * `{` would be quadratic: 200 KB of `{` never finished). Quotes count only inside an object: prose
 * around the JSON may hold a lone `"`.
 */
function jsonObjectCandidates(text: string): string[] {
  const spans = new Map<number, number>();
  let from = 0;
  for (let scan = 0; scan < MAX_SCANS && from < text.length; scan++) {
    const open: number[] = [];
    let inString = false;
    for (let i = text.indexOf('{', from); i !== -1 && i < text.length; i++) {
      const c = text[i];
      if (inString) {
        if (c === '\\') i++;
        else if (c === '"') inString = false;
      } else if (c === '{') open.push(i);
      else if (open.length === 0) {
        const next = text.indexOf('{', i);
        if (next === -1) break;
        i = next - 1;
      } else if (c === '"') inString = true;
      else if (c === '}') spans.set(open.pop()!, i + 1);
    }
    // A `{` that never closed may be prose ("use {x or y"): scan again just after the first such one.
    if (open.length === 0) break;
    from = open[0] + 1;
  }
  return [...spans]
    .sort((a, b) => a[0] - b[0])
    .slice(0, MAX_CANDIDATES)
    .map(([s, e]) => text.slice(s, e));
}

function toNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string') return parseNumberText(value);
  return null;
}

/** A decimal number as JavaScript's and JSON's number parsers read it: `1`, `-0.5`, `.5`, `1e-3`, `5E-1`. */
const DECIMAL = String.raw`[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?`;
/** Optional `/ 10` or `%` after it; bounded spacing, so no start position can backtrack far. */
const SCALE = String.raw`(?:[ \t]{0,4}(\/)[ \t]{0,4}(${DECIMAL})|(%))?`;
const NUMBER_TEXT = new RegExp(String.raw`^\s*(${DECIMAL})${SCALE}(?![\w.])`);

/**
 * "0.8", "1e-3", "8/10", "80%" → a number (fractions and percents become [0, 1] values); text after
 * the number is allowed ("0.8 (good)"), a number cut short is not ("1e", "1.2.3").
 */
function parseNumberText(text: string): number | null {
  const m = NUMBER_TEXT.exec(text);
  return m ? scaled(m[1], m[2], m[3], m[4]) : null;
}

function scaled(
  value: string,
  slash: string | undefined,
  denominator: string | undefined,
  percent: string | undefined,
): number | null {
  const n = Number(value);
  if (!Number.isFinite(n)) return null;
  if (slash) return Number(denominator) > 0 ? n / Number(denominator) : null;
  if (percent) return n / 100;
  return n;
}

function readDimensions(obj: Record<string, unknown>): Record<string, number> {
  const dims: Record<string, number> = {};
  const source =
    typeof obj.dimensions === 'object' && obj.dimensions !== null ? (obj.dimensions as Record<string, unknown>) : obj;
  for (const d of RUBRIC_DIMENSIONS) {
    const v = toNumber(source[d.key]);
    if (v !== null && v >= 0 && v <= 10) dims[d.key] = v;
  }
  return dims;
}

function fromObject(obj: Record<string, unknown>): JudgeResult {
  const dimensions = readDimensions(obj);
  const hasDims = Object.keys(dimensions).length > 0;
  const why = typeof obj.rationale === 'string' ? obj.rationale : typeof obj.reason === 'string' ? obj.reason : '';
  const key = OVERALL_KEYS.find((k) => k in obj);
  if (key === undefined) {
    if (Object.keys(dimensions).length === RUBRIC_DIMENSIONS.length) {
      const mean = Object.values(dimensions).reduce((a, b) => a + b, 0) / RUBRIC_DIMENSIONS.length / 10;
      return {
        score: mean,
        rationale: `no overall score given; mean of the five dimensions. ${why}`.trim(),
        dimensions,
      };
    }
    return noScore('the JSON reply has no "overall" score', hasDims ? { dimensions } : {});
  }
  const value = toNumber(obj[key]);
  if (value === null)
    return noScore(`"${key}" is not a number: ${JSON.stringify(obj[key])}`, hasDims ? { dimensions } : {});
  if (!isUnitScore(value)) return noScore(`"${key}" = ${value} is outside [0, 1]`, hasDims ? { dimensions } : {});
  return { score: value, rationale: why || 'no rationale given', ...(hasDims ? { dimensions } : {}) };
}

/** "Overall score (0-1): 0.8", "final rating = 8/10", "**Total:** 80%"; every quantifier that can meet spaces is bounded. */
const TEXT_OVERALL = new RegExp(
  String.raw`(?:overall|final|total)(?:\s{1,4}(?:score|rating))?\s{0,4}(?:\([^)\n]{0,40}\))?\s{0,4}\**\s{0,4}[:=]\s{0,4}\**\s{0,4}(${DECIMAL})${SCALE}(?![\w.])`,
  'i',
);

/** Parses a rubric reply into a result; null score with a reason when no valid score is found. */
export function parseRubricScore(reply: string): JudgeResult {
  const text = reply.trim();
  if (text === '') return noScore('the judge replied with empty text');
  let lastJsonProblem: JudgeResult | null = null;
  for (const candidate of jsonObjectCandidates(text)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(candidate);
    } catch {
      continue;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) continue;
    const result = fromObject(parsed as Record<string, unknown>);
    if (result.score !== null) return result;
    lastJsonProblem ??= result;
  }
  const m = TEXT_OVERALL.exec(text);
  if (m) {
    const value = scaled(m[1], m[2], m[3], m[4]);
    if (value !== null && isUnitScore(value)) return { score: value, rationale: `parsed from text: "${m[0].trim()}"` };
    if (value !== null) return noScore(`overall score ${m[0].slice(m[0].indexOf(m[1])).trim()} is outside [0, 1]`);
  }
  if (lastJsonProblem) return lastJsonProblem;
  const preview = text.length > 120 ? `${text.slice(0, 120)}…` : text;
  return noScore(`could not find a score in the reply: ${JSON.stringify(preview)}`);
}
