/**
 * Catalog data for repo_fix: what each level asks for (functions to fix, whether each uses a helper in
 * another file, whether the fix goes on a new branch), names, and wording. Functions are one line,
 * `x*a+b` (or `h(x)*a+b` through a helper), with one constant wrong.
 */

export interface FixLevel {
  /** Functions the test covers, each in its own source file, each with one wrong constant. */
  functions: number;
  /** Each function calls a helper kept in another file (`// uses src/base.js`). */
  helpers: boolean;
  /** The fix is committed on a new branch `fix-<name>`. */
  branch: boolean;
}

/**
 * Calls per level (the expert's): the test, each source and helper read, each fix written, one js check,
 * the branch, `git add`, `git commit`: 6, 7, 8, 9 and 11.
 */
export const FIX_LEVELS: Record<number, FixLevel> = {
  1: { functions: 1, helpers: false, branch: false },
  2: { functions: 1, helpers: false, branch: true },
  3: { functions: 1, helpers: true, branch: true },
  4: { functions: 2, helpers: false, branch: true },
  5: { functions: 2, helpers: true, branch: true },
};

export const FIX_NAMES = [
  'tax',
  'fee',
  'tip',
  'rent',
  'wage',
  'bonus',
  'score',
  'rate',
  'cost',
  'pay',
  'toll',
  'loan',
  'gain',
  'dose',
  'rank',
  'fare',
];
export const HELPER_NAMES = ['base', 'net', 'gross', 'unit', 'step', 'core', 'raw', 'span'];
/** A test file that covers two functions is named for the area they belong to. */
export const SUITE_NAMES = ['billing', 'payroll', 'invoice', 'checkout', 'ledger', 'budget', 'pricing', 'refunds'];
/** Source files that pass their tests, so listing `src` does not point at the broken one. */
export const FIX_DECOYS = 2;
export const MULTIPLIER_RANGE: [number, number] = [2, 5];
export const ADDEND_RANGE: [number, number] = [1, 9];
export const HELPER_ADD_RANGE: [number, number] = [1, 6];
/** Inputs the fixed function is checked on besides the test's own: 0 to 9. */
export const CHECK_INPUTS = Array.from({ length: 10 }, (_, i) => i);

export const FIX_PROMPT_MAIN =
  '{test} fails. Fix the function it tests, check the fix with js, then commit it as "{message}".';
export const FIX_PROMPT_BRANCH =
  '{test} fails. Fix the {what} it tests, check with js, then commit on a new branch {branch} as "{message}".';
