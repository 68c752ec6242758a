/**
 * The ensemble (`TrajectoryJudge`): every judge scores the trajectory concurrently, each
 * judge's calibration map is applied (the vote keeps `raw_score`), null votes are dropped, and the rest
 * are combined with a trimmed mean — the highest and lowest dropped when more than two remain. Fewer
 * than `minVotes` usable votes gives null. It never throws: a judge that throws is a null vote.
 */
import type { JudgeVote, Task, Trajectory } from '../contracts.ts';
import { calibrateVote, type CalibrationMap } from './calibration-map.ts';
import { castVote, type Judge } from './types.ts';

export interface EnsembleOptions {
  judges: Judge[];
  /** Usable (non-null) votes needed for a score; default 1. */
  minVotes?: number;
  /** Judge id → calibration map; judges without one are used raw. */
  calibration?: Record<string, CalibrationMap>;
  now?: () => number;
}

export interface Judgement {
  /** Trimmed mean of the usable votes, or null when fewer than `minVotes` remain. */
  score: number | null;
  votes: JudgeVote[];
  /** Why the score is null, or which votes were trimmed. */
  note: string;
}

/** Trimmed mean: drop the single highest and lowest when there are more than two values. */
export function trimmedMean(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const kept = sorted.length > 2 ? sorted.slice(1, -1) : sorted;
  return kept.reduce((a, b) => a + b, 0) / kept.length;
}

/**
 * The combined score of a trajectory's votes: the trimmed mean of the usable (non-null) judges' votes,
 * or null when fewer than `minVotes` are usable. The environment's own vote (`env:NAME`, verifier-gate.ts)
 * is the verifier, not a judge: it is left out here and gates the result instead.
 */
export function combineVotes(votes: readonly JudgeVote[], minVotes = 1): { score: number | null; note: string } {
  const judged = votes.filter((v) => !v.judge_id.startsWith('env:'));
  const usable = judged.flatMap((v) => (v.score === null ? [] : [v.score]));
  if (usable.length < minVotes) {
    return {
      score: null,
      note: `${usable.length} usable vote${usable.length === 1 ? '' : 's'} of ${judged.length}; ${minVotes} needed`,
    };
  }
  const trimmed = usable.length > 2 ? 'highest and lowest dropped' : 'no trimming (two votes or fewer)';
  return { score: trimmedMean(usable), note: `${usable.length} usable votes, ${trimmed}` };
}

export class TrajectoryJudge {
  readonly judges: readonly Judge[];
  readonly minVotes: number;
  private readonly calibration: Record<string, CalibrationMap>;
  private readonly now?: () => number;

  constructor(options: EnsembleOptions) {
    const ids = options.judges.map((j) => j.id);
    const dup = ids.find((id, i) => ids.indexOf(id) !== i);
    if (dup !== undefined)
      throw new Error(`Judge ids must be unique; "${dup}" appears twice. Give each judge its own id.`);
    this.judges = options.judges;
    this.minVotes = options.minVotes ?? 1;
    if (!Number.isInteger(this.minVotes) || this.minVotes < 1)
      throw new Error(`minVotes must be a positive integer, got ${options.minVotes}.`);
    this.calibration = { ...options.calibration };
    this.now = options.now;
  }

  async judge(trajectory: Trajectory, task: Task): Promise<Judgement> {
    const raw = await Promise.all(this.judges.map((j) => castVote(j, trajectory, task, this.now)));
    const votes = raw.map((v) => calibrateVote(v, this.calibration));
    return { ...combineVotes(votes, this.minVotes), votes };
  }

  /** Judges the trajectory and returns it with `votes` and `judge_score` filled in. */
  async scoreTrajectory(trajectory: Trajectory, task: Task): Promise<Trajectory> {
    const j = await this.judge(trajectory, task);
    return { ...trajectory, votes: j.votes, judge_score: j.score };
  }
}
