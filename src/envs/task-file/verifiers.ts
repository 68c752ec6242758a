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
 * never a silent 0. The verifier itself (its types and settings, and the one check of them) is
 * src/config/verifier.ts, shared with the config's validator.
 */
import { RE2JS } from 're2js';
import { CHOICE_LETTERS, regexProblem, show, type VerifierConfig } from '../../config/verifier.ts';
import type { Trajectory } from '../../contracts.ts';
export {
  checkVerifier,
  CHOICE_LETTERS,
  JS_LIMITS,
  show,
  VERIFIER_FIELDS,
  VERIFIER_TYPES,
  type VerifierConfig,
  type VerifierType,
} from '../../config/verifier.ts';
import { cleanAnswer } from '../answer.ts';
import { runJsVerifier } from './js-verifier.ts';
import type { Verdict, VerifierRow } from './verdict.ts';

const NUMBER_DEFAULTS = { abs_tol: 1e-6, rel_tol: 0 } as const;
/**
 * The reference a row gives a verifier, checked once when the file is loaded: the expected text, number
 * or letter, or a problem naming the field and the fix. `expert` is the final answer that scores 1, when
 * there is one (none for js, nor for a regex whose pattern is the row's answer).
 */
export function prepareReference(
  verifier: VerifierConfig,
  row: VerifierRow,
): { expert: string | null; canonical: string | null; problem: string | null } {
  const answer = String(row.answer);
  switch (verifier.type) {
    case 'exact':
    case 'contains': {
      const text = normalizeText(
        verifier.type === 'exact' ? cleanAnswer(answer) : answer,
        verifier.ignore_case ?? false,
      );
      if (text === '') return none(`"answer" is empty; the ${verifier.type} verifier needs the expected text`);
      return { expert: cleanAnswer(answer), canonical: verifier.type === 'exact' ? text : null, problem: null };
    }
    case 'number': {
      const value = extractFinalNumber(answer);
      if (value === null)
        return none(
          `"answer" ${show(row.answer)} holds no number for the number verifier; write the number, e.g. "42" (or "… #### 42")`,
        );
      return { expert: formatNumber(value), canonical: formatNumber(value), problem: null };
    }
    case 'choice': {
      const letter = choiceKey(answer, row.choices);
      if (letter === null)
        return none(
          `"answer" ${show(row.answer)} is not a choice; the choice verifier needs a letter A–E (or the text of one of "choices")`,
        );
      const k = optionCount(verifier, row);
      if (k !== null && CHOICE_LETTERS.indexOf(letter) >= k)
        return none(`"answer" is ${letter} but there are only ${k} choices (A–${CHOICE_LETTERS[k - 1]})`);
      return { expert: letter, canonical: letter, problem: null };
    }
    case 'regex': {
      if (verifier.pattern === undefined) {
        const problem = regexProblem(answer);
        return problem
          ? none(`"answer" ${problem}; with the regex verifier and no "pattern", the row's answer is the pattern`)
          : { expert: null, canonical: null, problem: null };
      }
      if (!compile(verifier.pattern, verifier.ignore_case).matcher(answer).find()) {
        return none(
          `"answer" ${show(row.answer)} does not match the verifier's pattern ${show(verifier.pattern)}; the answer must be one the pattern accepts`,
        );
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
export async function verify(
  verifier: VerifierConfig,
  response: string,
  row: VerifierRow,
  trajectory: Trajectory | null = null,
): Promise<Verdict> {
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
      return verdict(
        normalizeText(response, ignoreCase).includes(normalizeText(answer, ignoreCase)),
        `the answer does not contain ${show(answer)}`,
      );
    }
    case 'regex': {
      const matched = compile(verifier.pattern ?? answer, verifier.ignore_case)
        .matcher(response)
        .find();
      return verdict(matched, `the answer does not match ${show(verifier.pattern ?? answer)}`);
    }
    case 'number': {
      const got = extractFinalNumber(response);
      if (got === null) return { score: 0, reason: 'the answer holds no number' };
      const want = extractFinalNumber(answer)!;
      const tol = Math.max(
        verifier.abs_tol ?? NUMBER_DEFAULTS.abs_tol,
        (verifier.rel_tol ?? NUMBER_DEFAULTS.rel_tol) * Math.abs(want),
      );
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
function normalizeText(text: string, ignoreCase: boolean): string {
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
function choiceKey(answer: string, choices?: string[]): string | null {
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
    const m = s
      .slice(label.index + label[0].length)
      .match(/^[([]?(?:([A-E])(?![A-Za-z0-9])|([a-e])(?=[)\]]|[.:]?\s*$))/);
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
