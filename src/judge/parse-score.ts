/**
 * Reads a rubric judge's reply: JSON first (a bare object, or one inside a code fence or prose), then
 * tolerant text ("Overall: 0.8", "overall score = 7/10"). Anything that gives no score in [0, 1] is a
 * null result with the reason, never a guessed 0.
 */
import { RUBRIC_DIMENSIONS } from './render.ts';
import { isUnitScore, noScore, type JudgeResult } from './types.ts';

const OVERALL_KEYS = ['overall', 'overall_score', 'score', 'final_score', 'total'];

/** Every balanced `{…}` span in the text, outermost first, skipping braces inside strings. */
function jsonObjectCandidates(text: string): string[] {
  const out: string[] = [];
  for (let start = text.indexOf('{'); start !== -1; start = text.indexOf('{', start + 1)) {
    let depth = 0;
    let inString = false;
    for (let i = start; i < text.length; i++) {
      const c = text[i];
      if (inString) {
        if (c === '\\') i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{') depth++;
      else if (c === '}' && --depth === 0) {
        out.push(text.slice(start, i + 1));
        break;
      }
    }
  }
  return out;
}

function toNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string') return parseNumberText(value);
  return null;
}

/** "0.8", "8/10", "80%" → a number (fractions and percents become [0, 1] values). */
function parseNumberText(text: string): number | null {
  const m = /^\s*(-?\d+(?:\.\d+)?)\s*(?:(\/)\s*(\d+(?:\.\d+)?)|(%))?/.exec(text);
  if (!m) return null;
  const n = Number(m[1]);
  if (m[2]) return Number(m[3]) > 0 ? n / Number(m[3]) : null;
  if (m[4]) return n / 100;
  return n;
}

function readDimensions(obj: Record<string, unknown>): Record<string, number> {
  const dims: Record<string, number> = {};
  const source = typeof obj.dimensions === 'object' && obj.dimensions !== null ? (obj.dimensions as Record<string, unknown>) : obj;
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
      return { score: mean, rationale: `no overall score given; mean of the five dimensions. ${why}`.trim(), dimensions };
    }
    return noScore('the JSON reply has no "overall" score', hasDims ? { dimensions } : {});
  }
  const value = toNumber(obj[key]);
  if (value === null) return noScore(`"${key}" is not a number: ${JSON.stringify(obj[key])}`, hasDims ? { dimensions } : {});
  if (!isUnitScore(value)) return noScore(`"${key}" = ${value} is outside [0, 1]`, hasDims ? { dimensions } : {});
  return { score: value, rationale: why || 'no rationale given', ...(hasDims ? { dimensions } : {}) };
}

const TEXT_OVERALL = /(?:overall|final|total)(?:\s+(?:score|rating))?\s*(?:\([^)]*\))?\s*[:=]\s*\**\s*(-?\d+(?:\.\d+)?\s*(?:\/\s*\d+(?:\.\d+)?|%)?)/i;

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
    const value = parseNumberText(m[1]);
    if (value !== null && isUnitScore(value)) return { score: value, rationale: `parsed from text: "${m[0].trim()}"` };
    if (value !== null) return noScore(`overall score ${m[1].trim()} is outside [0, 1]`);
  }
  if (lastJsonProblem) return lastJsonProblem;
  const preview = text.length > 120 ? `${text.slice(0, 120)}…` : text;
  return noScore(`could not find a score in the reply: ${JSON.stringify(preview)}`);
}
