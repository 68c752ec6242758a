/**
 * How many decimals the lesson shows. A formula worked by hand from rounded inputs only gives its
 * rounded result when the inputs carry more decimals than the result (dividing by a std of 0.07
 * multiplies the inputs' rounding error by 14), so each kind of number has its own precision: the
 * final numbers (credits, objectives) 3 decimals, and each kind that feeds a formula the fewest
 * decimals at which every formula it feeds reproduces the result as shown (checks.ts). A number is
 * shown with the same decimals wherever it appears; the results are the trainer's, from unrounded values.
 */

/** One displayed formula: its inputs, how a reader computes the result from them, and the trainer's result. */
export interface FormulaCheck {
  inputs: readonly number[];
  compute: (shown: number[]) => number;
  result: number;
  /** Decimals the result is shown with; null: the same as the inputs (a mean of scores shown like the scores). */
  resultDigits: number | null;
}

export function roundTo(x: number, digits: number): number {
  const r = Number(x.toFixed(digits));
  return Object.is(r, -0) ? 0 : r;
}

/** The fewest decimals from `min` up to `max` for the inputs at which every check reproduces (`max` when none does). */
export function reproducingDigits(checks: readonly FormulaCheck[], min = 3, max = 10): number {
  for (let d = min; d < max; d++) {
    const ok = checks.every((c) => {
      if (![c.result, ...c.inputs].every(Number.isFinite)) return true;
      const out = c.resultDigits ?? d;
      return roundTo(c.compute(c.inputs.map((x) => roundTo(x, d))), out) === roundTo(c.result, out);
    });
    if (ok) return d;
  }
  return max;
}

/** A number rounded to `digits` decimals without trailing zeros, with a typographic minus; `—` when missing. */
export function show(x: number | null | undefined, digits: number): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '—';
  const r = roundTo(x, digits);
  // toFixed, not String: String(1e-7) is "1e-7".
  const fixed = Math.abs(r).toFixed(digits);
  const text = fixed.includes('.') ? fixed.replace(/0+$/, '').replace(/\.$/, '') : fixed;
  return r < 0 ? `−${text}` : text;
}

/** As `show`, with a sign on positive numbers too (advantages, credits). */
export function showSigned(x: number | null | undefined, digits: number): string {
  const text = show(x, digits);
  return x !== null && x !== undefined && roundTo(x, digits) > 0 ? `+${text}` : text;
}
