/**
 * The formulas the lesson shows, as a reader works them by hand from the numbers on screen, and the
 * decimals each kind of number needs for them to reproduce (precision.ts), from the final numbers back
 * to the scores: credits and objectives ← their parts ← advantages, discounts and ratios ← mean, std and scores.
 */
import type { clippedObjective } from '../../../pipeline/app/group-stats.ts';
import { reproducingDigits, type FormulaCheck } from './precision.ts';
import type { LessonGroup } from './source.ts';

/** A sample's clipped surrogate with the ratio it was taken at. */
export type SampleObjective = ReturnType<typeof clippedObjective> & { ratio: number };

/** Decimals per kind of number. */
export interface LessonDigits {
  /** Per-turn credits, r·A, clip(r)·A, objectives. */
  final: number;
  /** γ^d·A and the process part, when a credit is their sum. */
  parts: number;
  /** Advantages, γ^d, ratios. */
  advantage: number;
  /** Scores, mean, std, process bonuses. */
  stats: number;
}

// The reader's arithmetic, to check the shown numbers against (the results come from the trainer).
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const sampleStd = (xs: number[], m: number) => Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));

export function lessonDigits(
  g: LessonGroup,
  mode: 'zscore' | 'mean',
  objectives: readonly (SampleObjective | null)[],
  final = 3,
): LessonDigits {
  const w = g.credit && !g.credit.flat ? g.credit : null;
  const sums: FormulaCheck[] = w?.per_turn_process
    ? w.turns.map((t) => ({
        inputs: [t.outcome, t.process],
        compute: ([o, p]) => o + p,
        result: t.credit,
        resultDigits: final,
      }))
    : [];
  const parts = reproducingDigits(sums, final);

  const products: FormulaCheck[] = (w?.turns ?? []).map((t) => ({
    inputs: [t.discount, w!.advantage],
    compute: ([d, a]) => d * a,
    result: t.outcome,
    resultDigits: w!.per_turn_process ? parts : final,
  }));
  g.samples.forEach((s, i) => {
    const o = objectives[i];
    if (!o || s.advantage === null) return;
    products.push({
      inputs: [o.ratio, s.advantage],
      compute: ([r, a]) => r * a,
      result: o.unclipped,
      resultDigits: final,
    });
    products.push({
      inputs: [o.clippedRatio, s.advantage],
      compute: ([r, a]) => r * a,
      result: o.clipped,
      resultDigits: final,
    });
  });
  const advantage = reproducingDigits(products, parts);

  const st = g.stats;
  const stats: FormulaCheck[] = [];
  if (st) {
    const scores = g.samples.flatMap((s) => (s.ranked === null ? [] : [s.ranked]));
    stats.push({ inputs: scores, compute: mean, result: st.mean, resultDigits: null });
    if (scores.length > 1)
      stats.push({
        inputs: [...scores, st.mean],
        compute: (xs) => sampleStd(xs.slice(0, -1), xs.at(-1)!),
        result: st.std,
        resultDigits: null,
      });
    if (!st.zero_std) {
      for (const s of g.samples) {
        if (s.ranked === null || s.advantage === null) continue;
        stats.push(
          mode === 'zscore'
            ? {
                inputs: [s.ranked, st.mean, st.std],
                compute: ([x, m, sd]) => (x - m) / sd,
                result: s.advantage,
                resultDigits: advantage,
              }
            : { inputs: [s.ranked, st.mean], compute: ([x, m]) => x - m, result: s.advantage, resultDigits: advantage },
        );
      }
    }
  }
  return { final, parts, advantage, stats: reproducingDigits(stats, advantage) };
}
