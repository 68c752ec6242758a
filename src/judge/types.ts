/**
 * The judge interface every scorer implements (rule, remote LLM, in-browser model, self-judge, ensemble
 * members), and the helper that turns a result into the `JudgeVote` stored on the trajectory.
 *
 * `score: null` means "could not score" and always carries a reason in `rationale`; a judge never turns an
 * error into a silent 0.
 */
import type { JudgeVote, Task, Trajectory } from '../contracts.ts';

export interface JudgeCost {
  prompt_tokens: number;
  completion_tokens: number;
  usd: number;
}

export interface JudgeResult {
  /** In [0, 1], or null when the judge could not score. */
  score: number | null;
  /** Why this score, or why no score. */
  rationale: string;
  /** Rubric dimensions, each 0–10, when the judge gives them. */
  dimensions?: Record<string, number>;
  cost?: JudgeCost;
}

export interface Judge {
  readonly id: string;
  score(trajectory: Trajectory, task: Task): Promise<JudgeResult>;
}

/**
 * An environment's verifier: a score in [0, 1], or null when it cannot decide. Matches
 * `Environment.evaluate` (src/envs) without importing it, so judges do not depend on environments.
 */
export type EvaluateFn = (task: Task, trajectory: Trajectory) => number | null | Promise<number | null>;
export type Evaluator = EvaluateFn | { evaluate: EvaluateFn };

export function toEvaluateFn(evaluator: Evaluator): EvaluateFn {
  return typeof evaluator === 'function' ? evaluator : (task, trajectory) => evaluator.evaluate(task, trajectory);
}

/** A null result with a reason: the one way judges say "can't score". */
export function noScore(reason: string, extra: Omit<JudgeResult, 'score' | 'rationale'> = {}): JudgeResult {
  return { score: null, rationale: reason, ...extra };
}

/** True for a finite number in [0, 1]. */
export function isUnitScore(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 1;
}

/** The vote stored on the trajectory. A score outside [0, 1] is refused here too, so no judge can leak one. */
export function toVote(judgeId: string, result: JudgeResult, latencyMs: number): JudgeVote {
  const valid = result.score === null || isUnitScore(result.score);
  const vote: JudgeVote = {
    judge_id: judgeId,
    score: valid ? result.score : null,
    rationale: valid ? result.rationale : `score ${String(result.score)} is outside [0, 1]; ${result.rationale}`,
    latency_ms: Math.max(0, Math.round(latencyMs)),
  };
  if (result.dimensions) vote.dimensions = { ...result.dimensions };
  if (result.cost) vote.cost = { ...result.cost };
  return vote;
}

/** Runs one judge and always returns a vote: a throw becomes a null vote with the error as rationale. */
export async function castVote(
  judge: Judge,
  trajectory: Trajectory,
  task: Task,
  now: () => number = defaultNow,
): Promise<JudgeVote> {
  const start = now();
  let result: JudgeResult;
  try {
    result = await judge.score(trajectory, task);
  } catch (err) {
    result = noScore(`judge threw: ${errorMessage(err)}`);
  }
  return toVote(judge.id, result, now() - start);
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (err === null || err === undefined) return 'unknown error (null thrown)';
  return String(err);
}

function defaultNow(): number {
  return typeof performance !== 'undefined' ? performance.now() : Date.now();
}
