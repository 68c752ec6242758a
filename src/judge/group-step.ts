/**
 * The group step: what happens to a GRPO group once all its trajectories are rolled out and judged one
 * by one (rollout-worker.ts), before it is stored or trained on. It is the one place both paths that
 * make groups — training runs (pipeline/operations/run.ts) and collection (pipeline/operations/collect.ts) — finish a group:
 *   1. each group judge (`type: 'group'`) scores the whole group in one call, one vote per trajectory,
 *      added beside the per-trajectory votes (a re-run replaces its own earlier vote);
 *   2. every judge's vote goes through its calibration map (`judge.calibration`), the per-trajectory
 *      judges' and the group judges' alike, keeping its raw score;
 *   3. every member's score is recomputed from its votes (trimmed mean, `judge.min_votes`) and, with
 *      `judge.verifier_gate` on, gated by the environment's verdict, group rule included
 *      (verifier-gate.ts `groupScoresFromVotes`).
 * `success` stays the environment's verdict. Nothing here throws for a judge's sake: a group judge that
 * fails or leaves a trajectory out gives null votes with the reason.
 */
import type { JudgeConfig, RunConfig } from '../config/schema.ts';
import type { JudgeVote, Task, Trajectory } from '../contracts.ts';
import { calibrateVote, type CalibrationMap } from './calibration-map.ts';
import { createGroupJudges, type JudgeDeps } from './from-config.ts';
import { failedGroupJudge, type GroupJudge } from './group-judge.ts';
import { errorMessage, noScore, toVote } from './types.ts';
import { groupScoresFromVotes } from './verifier-gate.ts';

export interface GroupStepOptions {
  groupJudges: readonly GroupJudge[];
  minVotes: number;
  /** `judge.verifier_gate`. */
  gate: boolean;
  /** `judge.calibration`: judge id → map; absent, votes count as cast. */
  calibration?: Readonly<Record<string, CalibrationMap>>;
}

/** One group judge's votes, exactly one per trajectory whatever it returned, and never a throw. */
async function groupVotes(judge: GroupJudge, task: Task, group: readonly Trajectory[]): Promise<JudgeVote[]> {
  let votes: JudgeVote[];
  try {
    votes = await judge.judgeGroup(task, group);
  } catch (err) {
    return group.map(() => toVote(judge.id, noScore(`group judge threw: ${errorMessage(err)}`), 0));
  }
  if (!Array.isArray(votes)) votes = [];
  return group.map(
    (_, i) =>
      votes[i] ??
      toVote(
        judge.id,
        noScore(
          `the group judge returned ${votes.length} votes for ${group.length} trajectories; none for trajectory ${i + 1}`,
        ),
        0,
      ),
  );
}

/** Finishes one group: group judges' votes added, every score recomputed and gated. Returns new trajectories, in order. */
export async function judgeGroupStep(
  task: Task,
  group: readonly Trajectory[],
  options: GroupStepOptions,
): Promise<Trajectory[]> {
  if (group.length === 0) return [];
  const perJudge = await Promise.all(options.groupJudges.map((j) => groupVotes(j, task, group)));
  const votes = group.map((t, i) => {
    const added = perJudge.map((vs) => vs[i]);
    const ids = new Set(added.map((v) => v.judge_id));
    return [...t.votes.filter((v) => !ids.has(v.judge_id)), ...added].map((v) =>
      calibrateVote(v, options.calibration ?? {}),
    );
  });
  const scores = groupScoresFromVotes(votes, { minVotes: options.minVotes, gate: options.gate });
  return group.map((t, i) => ({ ...t, votes: votes[i], judge_score: scores[i] }));
}

/** The group judges a config chooses (the first `n_judges` of the list, as for the per-trajectory ones). */
export function chosenJudges(judge: RunConfig['judge']): JudgeConfig[] {
  return judge.n_judges === null ? judge.judges : judge.judges.slice(0, judge.n_judges);
}

export interface GroupStep {
  judge(task: Task, group: readonly Trajectory[]): Promise<Trajectory[]>;
}

/**
 * The group step of a run config, its group judges built once (they keep their cache and limits). A
 * group judge that cannot be set up (its key is missing) still takes part and votes null with the reason,
 * as per-trajectory judges do (pipeline/engine/every-judge.ts).
 */
export function createGroupStep(judge: RunConfig['judge'], deps: JudgeDeps = {}): GroupStep {
  const groupJudges = chosenJudges(judge).flatMap((c) => {
    if (c.type !== 'group') return [];
    try {
      return createGroupJudges([c], deps);
    } catch (err) {
      return [failedGroupJudge(c.id, `could not be set up: ${errorMessage(err)}`)];
    }
  });
  const options: GroupStepOptions = {
    groupJudges,
    minVotes: judge.min_votes,
    gate: judge.verifier_gate ?? true,
    calibration: judge.calibration ?? {},
  };
  return { judge: (task, group) => judgeGroupStep(task, group, options) };
}
