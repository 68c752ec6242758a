/**
 * The safety (regression) monitor (`SafetyMonitor`): every `check_every` steps,
 * evaluate baseline benchmarks on the VALIDATION split (test items are never used to choose a
 * checkpoint); a benchmark whose success rate falls below `baseline × (1 − threshold)` (by default a 5%
 * relative test) AND below the baseline by more than the evaluation's own noise is a regression.
 * The noise test is needed: a 5% relative drop on 32 items is well inside sampling noise (one item is
 * 3 points), so the drop must also exceed 1.96 standard errors of the difference of two rates measured
 * on `eval_items` items each (`noiseMargin`), or every run would roll back on luck. On any
 * regression the monitor asks the trainer to roll back to the best checkpoint (when `rollback` is
 * on) and to raise the share of capability (replay) data to `capability_ratio` (default 0.5, up from
 * 0.3 = 1 − online_ratio).
 *
 * The evaluator is injected (`Record<benchmark, score>`), so this runs without workers or tfjs.
 * Baselines are the first evaluation (step 0: the weights training started from) and stay fixed. The
 * best checkpoint is the checked step with the highest mean benchmark score among checks without a
 * regression (step 0 included); the trainer keeps a checkpoint of every such step.
 */
import type { RunConfig } from '../config/schema.ts';
import type { RunMarker } from '../contracts.ts';

export type SafetyConfig = Pick<
  RunConfig['safety'],
  'enabled' | 'check_every' | 'threshold' | 'eval_items' | 'rollback' | 'capability_ratio'
>;

/** Scores of the held-out baseline sets, by benchmark name (e.g. `arith_tool/test`). */
export type BenchmarkScores = Record<string, number>;
export type BaselineEvaluator = (step: number) => Promise<BenchmarkScores>;

export interface Regression {
  benchmark: string;
  baseline: number;
  current: number;
  drop: number;
}

export interface SafetyState {
  baselines: BenchmarkScores | null;
  best: { step: number; mean: number } | null;
  lastCheck: number | null;
}

export interface SafetyReport {
  step: number;
  scores: BenchmarkScores;
  regressions: Regression[];
  /** Step of the checkpoint to restore, or null (no regression, or rollback off). */
  rollbackTo: number | null;
  /** The capability (replay) share to use from now on, or null to keep the current one. */
  capabilityRatio: number | null;
  /** Whether this step is now the best checkpoint (the trainer should keep its checkpoint). */
  isBest: boolean;
}

/** 1.96 standard errors of the difference between two success rates near `p`, each measured on `n` items. */
export function noiseMargin(p: number, n: number): number {
  return 1.96 * Math.sqrt((2 * p * (1 - p)) / Math.max(1, n));
}

/** Per benchmark: `current < baseline × (1 − threshold)` and `baseline − current > noiseMargin`. */
export function detectRegressions(
  baselines: BenchmarkScores,
  current: BenchmarkScores,
  threshold: number,
  items: number,
): Regression[] {
  const out: Regression[] = [];
  for (const [benchmark, baseline] of Object.entries(baselines)) {
    const cur = current[benchmark];
    if (typeof cur !== 'number' || !Number.isFinite(cur)) {
      throw new Error(
        `safety: the evaluator returned no score for benchmark "${benchmark}"; it must score every baseline benchmark each time`,
      );
    }
    const pooled = (baseline + cur) / 2;
    if (cur < baseline * (1 - threshold) && baseline - cur > noiseMargin(pooled, items))
      out.push({ benchmark, baseline, current: cur, drop: baseline - cur });
  }
  return out;
}

function meanScore(scores: BenchmarkScores): number {
  const v = Object.values(scores);
  return v.length === 0 ? 0 : v.reduce((a, b) => a + b, 0) / v.length;
}

export class SafetyMonitor {
  private st: SafetyState;

  constructor(
    private readonly cfg: SafetyConfig,
    private readonly evaluate: BaselineEvaluator,
    state?: SafetyState,
  ) {
    this.st = state ? structuredClone(state) : { baselines: null, best: null, lastCheck: null };
  }

  /** True at step 0 (to set baselines) and every `check_every` steps after, when enabled. */
  due(step: number): boolean {
    if (!this.cfg.enabled) return false;
    if (this.st.baselines === null) return true;
    return step > 0 && step % this.cfg.check_every === 0 && this.st.lastCheck !== step;
  }

  async check(step: number): Promise<SafetyReport> {
    const scores = await this.evaluate(step);
    this.st.lastCheck = step;
    const none = { step, scores, regressions: [], rollbackTo: null, capabilityRatio: null };
    if (this.st.baselines === null) {
      this.st.baselines = { ...scores };
      this.st.best = { step, mean: meanScore(scores) };
      return { ...none, isBest: true };
    }
    const regressions = detectRegressions(this.st.baselines, scores, this.cfg.threshold, this.cfg.eval_items);
    if (regressions.length > 0) {
      return {
        step,
        scores,
        regressions,
        rollbackTo: this.cfg.rollback && this.st.best ? this.st.best.step : null,
        capabilityRatio: this.cfg.capability_ratio,
        isBest: false,
      };
    }
    const m = meanScore(scores);
    const isBest = this.st.best === null || m > this.st.best.mean;
    if (isBest) this.st.best = { step, mean: m };
    return { ...none, isBest };
  }

  /** Run markers for a report, one per regressed benchmark. */
  static markers(report: SafetyReport, runId: string, time: number): RunMarker[] {
    return report.regressions.map((r) => ({
      kind: 'regression' as const,
      run_id: runId,
      step: report.step,
      benchmark: r.benchmark,
      baseline: r.baseline,
      current: r.current,
      rolled_back_to: report.rollbackTo,
      time,
    }));
  }

  state(): SafetyState {
    return structuredClone(this.st);
  }
}
