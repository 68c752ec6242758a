/**
 * Verifiers for task files: how a model's final answer is checked against a row's answer. One is chosen
 * in the run config (`tasks.verifier`) or per row (`verifier`); a row's own wins, then the config's, then
 * `exact`.
 *
 * - `exact`: the cleaned answer ("Answer: 42." → "42", quotes, whitespace) equals the row's; `ignore_case`.
 * - `number`: the final number of the answer ("#### 42", "\boxed{42}", "The answer is 1,234.", "$42", "3/4")
 *   equals the row's within `abs_tol` or `rel_tol` (a number in the row's answer is read the same way).
 * - `contains`: the row's answer occurs in the model's (whitespace collapsed); `ignore_case`.
 * - `regex`: the model's answer matches `pattern` (default: the row's answer is the pattern), in RE2 syntax
 *   (linear time, so a pattern cannot hang on a long answer); `ignore_case`.
 * - `choice`: the letter A–E the answer picks ("B", "(b)", "Answer: B", "B) 12 apples", or a choice's text)
 *   equals the row's letter; `options` says how many choices there are (default: the row's `choices`,
 *   else the labels in its prompt).
 * - `js`: `source` is a function `(answer, row, trajectory) => score` run in QuickJS (js-verifier.ts).
 *
 * Scores are in [0, 1]. A wrong answer scores 0 with the reason; a verdict the verifier cannot give (a
 * row answer it cannot read, a js verifier that throws, times out or returns 7) is null with the reason,
 * never a silent 0. The config's validator (src/config/validate.ts, `tasks.verifier`) checks the same
 * fields; tests/envs/task-file.test.ts holds the two to the same answers.
 */
import { RE2JS } from 're2js';
import type { Trajectory } from '../../contracts.ts';
import { cleanAnswer } from '../answer.ts';
import { runJsVerifier } from './js-verifier.ts';

export const VERIFIER_TYPES = ['exact', 'number', 'contains', 'regex', 'choice', 'js'] as const;
export type VerifierType = (typeof VERIFIER_TYPES)[number];

/** A verifier and its settings, as written in the config or a row (snake_case, like the rest of the config). */
export type VerifierConfig =
  | { type: 'exact'; ignore_case?: boolean }
  | { type: 'contains'; ignore_case?: boolean }
  | { type: 'regex'; pattern?: string; ignore_case?: boolean }
  | { type: 'number'; abs_tol?: number; rel_tol?: number }
  | { type: 'choice'; options?: number }
  | { type: 'js'; source: string; timeout_ms?: number; memory_mb?: number };

/** A score in [0, 1], or null when the verifier cannot decide; the reason either way. */
export interface Verdict {
  score: number | null;
  reason: string;
}

/** What a verifier reads of a row: its answer and, for `choice`, its choices; a js verifier gets all of it. */
export interface VerifierRow {
  answer: string | number;
  choices?: string[];
  prompt?: string;
  [field: string]: unknown;
}

export const NUMBER_DEFAULTS = { abs_tol: 1e-6, rel_tol: 0 } as const;
export const JS_LIMITS = { timeout_ms: [10, 10_000], memory_mb: [1, 256] } as const;
export const CHOICE_LETTERS = 'ABCDE';

type FieldKind = 'boolean' | 'pattern' | 'tolerance' | 'options' | 'source' | 'timeout_ms' | 'memory_mb';
/** The fields each verifier takes besides `type`. */
export const VERIFIER_FIELDS: Record<VerifierType, Record<string, FieldKind>> = {
  exact: { ignore_case: 'boolean' },
  contains: { ignore_case: 'boolean' },
  regex: { pattern: 'pattern', ignore_case: 'boolean' },
  number: { abs_tol: 'tolerance', rel_tol: 'tolerance' },
  choice: { options: 'options' },
  js: { source: 'source', timeout_ms: 'timeout_ms', memory_mb: 'memory_mb' },
};

/**
 * Checks a verifier given as a type name (`"number"`) or an object (`{type: "number", abs_tol: 0.01}`).
 * Returns the normalised verifier, or null with every problem, each naming `path.field` and the fix.
 */
export function checkVerifier(value: unknown, path: string): { verifier: VerifierConfig | null; problems: string[] } {
  const given = typeof value === 'string' ? { type: value.trim() } : value;
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    return { verifier: null, problems: [`"${path}" must be a verifier name (${VERIFIER_TYPES.join(', ')}) or a mapping like {type: number, abs_tol: 0.01}, got ${show(value)}.`] };
  }
  const v = given as Record<string, unknown>;
  if (!(VERIFIER_TYPES as readonly unknown[]).includes(v.type)) {
    return { verifier: null, problems: [`"${path}.type" is ${show(v.type)}; allowed: ${VERIFIER_TYPES.join(', ')}.`] };
  }
  const type = v.type as VerifierType;
  const fields = VERIFIER_FIELDS[type];
  const problems: string[] = [];
  for (const [field, raw] of Object.entries(v)) {
    if (field === 'type') continue;
    const kind = fields[field];
    if (!kind) {
      problems.push(`"${path}.${field}" is not a setting of the ${type} verifier; allowed: ${Object.keys(fields).join(', ') || 'none'}.`);
      continue;
    }
    const problem = checkSetting(kind, raw);
    if (problem) problems.push(`"${path}.${field}" ${problem}, got ${show(raw)}.`);
  }
  if (type === 'js' && v.source === undefined) problems.push(`"${path}.source" is missing: the js verifier needs a function source like "(answer, row) => answer === row.answer ? 1 : 0".`);
  return problems.length ? { verifier: null, problems } : { verifier: v as unknown as VerifierConfig, problems };
}

function checkSetting(kind: FieldKind, value: unknown): string | null {
  const isNumber = typeof value === 'number' && Number.isFinite(value);
  switch (kind) {
    case 'boolean':
      return typeof value === 'boolean' ? null : 'must be true or false';
    case 'pattern':
      if (typeof value !== 'string' || value === '') return 'must be a non-empty regular expression (RE2 syntax)';
      return regexProblem(value);
    case 'tolerance':
      return isNumber && value >= 0 ? null : 'must be a number ≥ 0 (e.g. 0.01)';
    case 'options':
      return Number.isInteger(value) && (value as number) >= 2 && (value as number) <= CHOICE_LETTERS.length ? null : `must be the number of choices, a whole number 2–${CHOICE_LETTERS.length}`;
    case 'source':
      return typeof value === 'string' && value.trim() !== '' ? null : 'must be a JavaScript function source like "(answer, row, trajectory) => answer === row.answer ? 1 : 0"';
    case 'timeout_ms':
    case 'memory_mb': {
      const [lo, hi] = JS_LIMITS[kind];
      return isNumber && Number.isInteger(value) && value >= lo && value <= hi ? null : `must be a whole number ${lo}–${hi}`;
    }
  }
}

/** Why a pattern does not compile as RE2, or null. */
function regexProblem(pattern: string): string | null {
  try {
    RE2JS.compile(pattern);
    return null;
  } catch (e) {
    return `is not a valid RE2 regular expression (${e instanceof Error ? e.message : String(e)}; RE2 has no backreferences or lookaround)`;
  }
}

/**
 * The reference a row gives a verifier, checked once when the file is loaded: the expected text, number
 * or letter, or a problem naming the field and the fix. `expert` is the final answer that scores 1, when
 * there is one (none for js, nor for a regex whose pattern is the row's answer).
 */
export function prepareReference(verifier: VerifierConfig, row: VerifierRow): { expert: string | null; canonical: string | null; problem: string | null } {
  const answer = String(row.answer);
  switch (verifier.type) {
    case 'exact':
    case 'contains': {
      const text = normalizeText(verifier.type === 'exact' ? cleanAnswer(answer) : answer, verifier.ignore_case ?? false);
      if (text === '') return none(`"answer" is empty; the ${verifier.type} verifier needs the expected text`);
      return { expert: cleanAnswer(answer), canonical: verifier.type === 'exact' ? text : null, problem: null };
    }
    case 'number': {
      const value = extractFinalNumber(answer);
      if (value === null) return none(`"answer" ${show(row.answer)} holds no number for the number verifier; write the number, e.g. "42" (or "… #### 42")`);
      return { expert: formatNumber(value), canonical: formatNumber(value), problem: null };
    }
    case 'choice': {
      const letter = choiceKey(answer, row.choices);
      if (letter === null) return none(`"answer" ${show(row.answer)} is not a choice; the choice verifier needs a letter A–E (or the text of one of "choices")`);
      const k = optionCount(verifier, row);
      if (k !== null && CHOICE_LETTERS.indexOf(letter) >= k) return none(`"answer" is ${letter} but there are only ${k} choices (A–${CHOICE_LETTERS[k - 1]})`);
      return { expert: letter, canonical: letter, problem: null };
    }
    case 'regex': {
      if (verifier.pattern === undefined) {
        const problem = regexProblem(answer);
        return problem ? none(`"answer" ${problem}; with the regex verifier and no "pattern", the row's answer is the pattern`) : { expert: null, canonical: null, problem: null };
      }
      if (!compile(verifier.pattern, verifier.ignore_case).matcher(answer).find()) {
        return none(`"answer" ${show(row.answer)} does not match the verifier's pattern ${show(verifier.pattern)}; the answer must be one the pattern accepts`);
      }
      return { expert: answer, canonical: null, problem: null };
    }
    case 'js':
      return { expert: null, canonical: null, problem: null };
  }
}

function none(problem: string) {
  return { expert: null, canonical: null, problem };
}

/** Scores `response` (the trajectory's final answer) against the row with this verifier. */
export async function verify(verifier: VerifierConfig, response: string, row: VerifierRow, trajectory: Trajectory | null = null): Promise<Verdict> {
  if (verifier.type === 'js') return runJsVerifier(verifier, response, row, trajectory);
  const reference = prepareReference(verifier, row);
  if (reference.problem) return { score: null, reason: `cannot check this row: ${reference.problem}` };
  const answer = String(row.answer);
  switch (verifier.type) {
    case 'exact': {
      const got = normalizeText(cleanAnswer(response), verifier.ignore_case ?? false);
      return verdict(got === reference.canonical, `expected ${show(reference.canonical)}, got ${show(got)}`);
    }
    case 'contains': {
      const ignoreCase = verifier.ignore_case ?? false;
      return verdict(normalizeText(response, ignoreCase).includes(normalizeText(answer, ignoreCase)), `the answer does not contain ${show(answer)}`);
    }
    case 'regex': {
      const matched = compile(verifier.pattern ?? answer, verifier.ignore_case).matcher(response).find();
      return verdict(matched, `the answer does not match ${show(verifier.pattern ?? answer)}`);
    }
    case 'number': {
      const got = extractFinalNumber(response);
      if (got === null) return { score: 0, reason: 'the answer holds no number' };
      const want = extractFinalNumber(answer)!;
      const tol = Math.max(verifier.abs_tol ?? NUMBER_DEFAULTS.abs_tol, (verifier.rel_tol ?? NUMBER_DEFAULTS.rel_tol) * Math.abs(want));
      return verdict(Math.abs(got - want) <= tol, `expected ${formatNumber(want)}, got ${formatNumber(got)}`);
    }
    case 'choice': {
      const got = extractChoice(response, row.choices);
      if (got === null) return { score: 0, reason: 'the answer picks no choice letter' };
      return verdict(got === reference.canonical, `expected ${reference.canonical}, got ${got}`);
    }
  }
}

function verdict(correct: boolean, whyNot: string): Verdict {
  return correct ? { score: 1, reason: 'correct' } : { score: 0, reason: whyNot };
}

function compile(pattern: string, ignoreCase = false): RE2JS {
  return RE2JS.compile(pattern, ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
}

/** Whitespace collapsed, optionally lower-cased. */
export function normalizeText(text: string, ignoreCase: boolean): string {
  const s = text.replace(/\s+/g, ' ').trim();
  return ignoreCase ? s.toLowerCase() : s;
}

// ---- Numbers ----------------------------------------------------------------------------------------

/** A number: optional sign and `$`, digits with optional thousands commas and decimals, optional `/denominator`. */
const NUMBER = /(?<![\w.])([-−])?\$?\s?((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)(?:\/(\d+))?(?![\d/])/g;
const ANSWER_LABEL = /(?:final answer|answer)\s*(?:is|was|:|=)\s*/gi;

/**
 * The final number of an answer, or null. Labelled places come first: after the last `####` (GSM8K),
 * inside the last `\boxed{…}`, after the last "answer is / Answer:", the first number there (so "The
 * answer is 42 (6 × 7)" reads 42); else the last number of the text. Commas, `$`, `%` and a trailing
 * period are ignored; "3/4" reads 0.75; "−5" reads -5.
 */
export function extractFinalNumber(text: string): number | null {
  const s = text.replace(/\*\*/g, '');
  const hashes = s.lastIndexOf('####');
  if (hashes >= 0) {
    const n = firstNumber(s.slice(hashes + 4));
    if (n !== null) return n;
  }
  const boxed = s.lastIndexOf('\\boxed{');
  if (boxed >= 0) {
    const end = s.indexOf('}', boxed);
    const n = firstNumber(s.slice(boxed + 7, end < 0 ? undefined : end));
    if (n !== null) return n;
  }
  const labels = [...s.matchAll(ANSWER_LABEL)];
  if (labels.length) {
    const last = labels[labels.length - 1];
    const n = firstNumber(s.slice(last.index + last[0].length));
    if (n !== null) return n;
  }
  const all = [...s.matchAll(NUMBER)];
  return all.length ? toNumber(all[all.length - 1]) : null;
}

function firstNumber(text: string): number | null {
  const m = new RegExp(NUMBER.source).exec(text);
  return m ? toNumber(m) : null;
}

function toNumber(m: RegExpMatchArray): number | null {
  const value = Number(m[2].replace(/,/g, ''));
  const signed = m[1] ? -value : value;
  if (m[3] !== undefined) {
    const denominator = Number(m[3]);
    return denominator === 0 ? null : signed / denominator;
  }
  return Number.isFinite(signed) ? signed : null;
}

/** A number as an answer: integers plainly, others to at most 12 significant digits without trailing zeros. */
export function formatNumber(n: number): string {
  return Number.isInteger(n) ? String(n) : String(Number(n.toPrecision(12)));
}

// ---- Choices ----------------------------------------------------------------------------------------

/** A row's answer as a letter: a letter A–E in any of the forms `extractChoice` reads, or a choice's text. */
export function choiceKey(answer: string, choices?: string[]): string | null {
  const byText = choiceByText(answer, choices);
  if (byText) return byText;
  const m = answer.trim().match(/^(?:option\s*)?[([]?([A-Ea-e])[)\].:]?$/i);
  return m ? m[1].toUpperCase() : null;
}

/**
 * The choice an answer picks, or null: the whole answer as a letter ("B", "(b)", "c."), a letter that
 * opens an option ("B) 12 apples", "B. 12"), the letter after the last "answer is / Answer:", one
 * distinct "(X)" in the text, or the text of one of the row's choices. Lower-case letters count only
 * where they cannot be a word ("Answer: b", not "the answer is a cat").
 */
export function extractChoice(text: string, choices?: string[]): string | null {
  const s = text.replace(/\*\*/g, '').trim();
  const whole = choiceKey(s);
  if (whole) return whole;
  const opening = s.match(/^[([]?([A-E])[)\].:]\s/);
  if (opening) return opening[1];
  // The label in any case; the letter after it case-sensitively (an upper-case letter, or a lower-case one closed by a bracket or the end).
  for (const label of [...s.matchAll(/(?:answer|choice|option)\s*(?:is|:|=)?\s*/gi)].reverse()) {
    const m = s.slice(label.index + label[0].length).match(/^[([]?(?:([A-E])(?![A-Za-z0-9])|([a-e])(?=[)\]]|[.:]?\s*$))/);
    if (m) return (m[1] ?? m[2]).toUpperCase();
  }
  const byText = choiceByText(s, choices);
  if (byText) return byText;
  const bracketed = new Set([...s.matchAll(/\(([A-E])\)/g)].map((m) => m[1]));
  return bracketed.size === 1 ? [...bracketed][0] : null;
}

function choiceByText(text: string, choices?: string[]): string | null {
  if (!choices?.length) return null;
  const want = normalizeText(cleanAnswer(text), true);
  const index = choices.findIndex((c) => normalizeText(c, true) === want);
  return index >= 0 && index < CHOICE_LETTERS.length ? CHOICE_LETTERS[index] : null;
}

/**
 * How many choices a row offers: the verifier's `options`, else the row's `choices`, else the run of
 * option labels in its prompt ("A) …", "(B) …", "C. …" from A on); null when it cannot tell.
 */
export function optionCount(verifier: VerifierConfig, row: VerifierRow): number | null {
  if (verifier.type === 'choice' && verifier.options !== undefined) return verifier.options;
  if (row.choices?.length) return row.choices.length;
  const labels = new Set([...(row.prompt ?? '').matchAll(/(?:^|\s)\(?([A-E])[).:]\s/gm)].map((m) => m[1]));
  let k = 0;
  while (k < CHOICE_LETTERS.length && labels.has(CHOICE_LETTERS[k])) k++;
  return k >= 2 ? k : null;
}

export function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  try {
    const s = JSON.stringify(value) ?? String(value);
    return s.length > 80 ? `${s.slice(0, 77)}…` : s;
  } catch {
    return String(value);
  }
}
