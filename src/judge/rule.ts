/**
 * The rule judge: the environment's own verifier (exact answers, hidden tests in the sandbox) blended
 * with format checks. score = (1 − w)·evaluate + w·(share of format checks passed), w = `formatWeight`.
 * Without an evaluator it scores format only. When the evaluator cannot decide (null, throws, or returns
 * something outside [0, 1]) the rule judge cannot either: null with the reason, never a format-only score
 * passed off as a verdict.
 */
import type { Task, Trajectory } from '../contracts.ts';
import { FORMAT_CHECKS, runFormatChecks, type FormatCheckName } from './format-checks.ts';
import {
  errorMessage,
  isUnitScore,
  noScore,
  toEvaluateFn,
  type EvaluateFn,
  type Evaluator,
  type Judge,
  type JudgeResult,
} from './types.ts';

export interface RuleJudgeOptions {
  id?: string;
  evaluator?: Evaluator | null;
  /** Which format checks run; default all. Pass [] for the evaluator alone. */
  checks?: readonly FormatCheckName[];
  /** Weight of the format share in the score, in [0, 1]; default 0.2. */
  formatWeight?: number;
}

export class RuleJudge implements Judge {
  readonly id: string;
  private readonly evaluate: EvaluateFn | null;
  private readonly checks: readonly FormatCheckName[];
  private readonly formatWeight: number;

  constructor(options: RuleJudgeOptions = {}) {
    this.id = options.id ?? 'rule';
    this.evaluate = options.evaluator ? toEvaluateFn(options.evaluator) : null;
    this.checks = options.checks ?? FORMAT_CHECKS;
    const w = options.formatWeight ?? 0.2;
    if (!(w >= 0 && w <= 1)) throw new Error(`RuleJudge formatWeight must be in [0, 1], got ${w}.`);
    this.formatWeight = this.checks.length === 0 ? 0 : this.evaluate ? w : 1;
    if (!this.evaluate && this.checks.length === 0)
      throw new Error('RuleJudge needs an evaluator or at least one format check.');
  }

  async score(trajectory: Trajectory, task: Task): Promise<JudgeResult> {
    const formats = runFormatChecks(trajectory, this.checks);
    const passed = formats.filter((f) => f.passed).length;
    const formatShare = formats.length === 0 ? 1 : passed / formats.length;
    const failed = formats.filter((f) => !f.passed).map((f) => `${f.check} (${f.detail})`);
    const formatText =
      formats.length === 0
        ? ''
        : `format ${passed}/${formats.length}${failed.length ? `; failed: ${failed.join(', ')}` : ''}`;

    let verdict: number | null = null;
    if (this.evaluate) {
      let raw: unknown;
      try {
        raw = await this.evaluate(task, trajectory);
      } catch (err) {
        return noScore(`environment evaluate() threw: ${errorMessage(err)}`);
      }
      if (raw === null)
        return noScore(`the environment could not evaluate this trajectory${formatText ? `; ${formatText}` : ''}`);
      if (!isUnitScore(raw)) return noScore(`environment evaluate() returned ${String(raw)}, not a number in [0, 1]`);
      verdict = raw;
    }
    const w = this.formatWeight;
    const score = verdict === null ? formatShare : (1 - w) * verdict + w * formatShare;
    const dimensions: Record<string, number> = { format: formatShare * 10 };
    if (verdict !== null) dimensions.correctness = verdict * 10;
    const parts = [verdict === null ? '' : `environment verdict ${verdict}`, formatText].filter(Boolean);
    return { score: clampUnit(score), rationale: parts.join('; '), dimensions };
  }
}

function clampUnit(x: number): number {
  return Math.min(1, Math.max(0, x));
}
