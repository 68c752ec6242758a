/**
 * A task file's verifier as written in the run config (`tasks.verifier`) or in a row (`verifier`): the
 * types, their settings and the one check of them. The config's validator and the task-file reader
 * (src/envs/task-file/) both call `checkVerifier`, so the two accept and refuse the same things, with
 * the same messages.
 */
import { RE2JS } from 're2js';
import { show } from './show.ts';

export { show };

export const VERIFIER_TYPES = ['exact', 'number', 'contains', 'regex', 'choice', 'js'] as const;
export type VerifierType = (typeof VERIFIER_TYPES)[number];

/** A verifier and its settings (snake_case, like the rest of the config). */
export type VerifierConfig =
  | { type: 'exact'; ignore_case?: boolean }
  | { type: 'contains'; ignore_case?: boolean }
  | { type: 'regex'; pattern?: string; ignore_case?: boolean }
  | { type: 'number'; abs_tol?: number; rel_tol?: number }
  | { type: 'choice'; options?: number }
  | { type: 'js'; source: string; timeout_ms?: number; memory_mb?: number };

export const JS_LIMITS = { timeout_ms: [10, 10_000], memory_mb: [1, 256] } as const;
/** The letters a multiple-choice answer picks from: at most this many choices. */
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

export interface VerifierProblem {
  /** `path` or `path.field`. */
  path: string;
  message: string;
}

/**
 * Checks a verifier given as a type name (`"number"`) or an object (`{type: "number", abs_tol: 0.01}`).
 * Returns the normalised verifier, or null with every problem, each naming `path.field` and the fix.
 */
export function checkVerifier(
  value: unknown,
  path: string,
): { verifier: VerifierConfig | null; problems: VerifierProblem[] } {
  const given = typeof value === 'string' ? { type: value.trim() } : value;
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    return {
      verifier: null,
      problems: [
        {
          path,
          message: `"${path}" must be a verifier name (${VERIFIER_TYPES.join(', ')}) or a mapping like {type: number, abs_tol: 0.01}, got ${show(value)}.`,
        },
      ],
    };
  }
  const v = given as Record<string, unknown>;
  if (!(VERIFIER_TYPES as readonly unknown[]).includes(v.type)) {
    return {
      verifier: null,
      problems: [
        { path: `${path}.type`, message: `"${path}.type" is ${show(v.type)}; allowed: ${VERIFIER_TYPES.join(', ')}.` },
      ],
    };
  }
  const type = v.type as VerifierType;
  const fields = VERIFIER_FIELDS[type];
  const problems: VerifierProblem[] = [];
  for (const [field, raw] of Object.entries(v)) {
    if (field === 'type') continue;
    const at = `${path}.${field}`;
    const kind = fields[field];
    if (!kind) {
      problems.push({
        path: at,
        message: `"${at}" is not a setting of the ${type} verifier; allowed: ${Object.keys(fields).join(', ') || 'none'}.`,
      });
      continue;
    }
    const problem = checkSetting(kind, raw);
    if (problem) problems.push({ path: at, message: `"${at}" ${problem}, got ${show(raw)}.` });
  }
  if (type === 'js' && v.source === undefined) {
    problems.push({
      path: `${path}.source`,
      message: `"${path}.source" is missing: the js verifier needs a function source like "(answer, row) => answer === row.answer ? 1 : 0".`,
    });
  }
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
      return Number.isInteger(value) && (value as number) >= 2 && (value as number) <= CHOICE_LETTERS.length
        ? null
        : `must be the number of choices, a whole number 2–${CHOICE_LETTERS.length}`;
    case 'source':
      return typeof value === 'string' && value.trim() !== ''
        ? null
        : 'must be a JavaScript function source like "(answer, row, trajectory) => answer === row.answer ? 1 : 0"';
    case 'timeout_ms':
    case 'memory_mb': {
      const [lo, hi] = JS_LIMITS[kind];
      return isNumber && Number.isInteger(value) && value >= lo && value <= hi
        ? null
        : `must be a whole number ${lo}–${hi}`;
    }
  }
}

/** Why a pattern does not compile as RE2, or null. */
export function regexProblem(pattern: string): string | null {
  try {
    RE2JS.compile(pattern);
    return null;
  } catch (e) {
    return `is not a valid RE2 regular expression (${e instanceof Error ? e.message : String(e)}; RE2 has no backreferences or lookaround)`;
  }
}
