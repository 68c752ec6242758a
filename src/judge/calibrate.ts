/**
 * Calibration against a labelled reference set (JSONL of `{trajectory, gold}`): runs every judge on
 * every item, fits one monotone map per judge, and reports how well the judges agree with gold and with
 * each other, before and after calibration. The errors "after" are in-sample (fitted and measured on
 * the same items); hold out a second file to measure generalisation.
 */
import type { CalibrationItem, JudgeVote, Task, Trajectory } from '../contracts.ts';
import { krippendorffAlphaInterval, meanAbsoluteError, spearman } from './agreement.ts';
import {
  applyCalibration,
  fitCalibrationMap,
  type CalibrationFile,
  type CalibrationMap,
  type CalibrationMethod,
} from './calibration-map.ts';
import { trimmedMean } from './ensemble.ts';
import type { GroupJudge } from './group-judge.ts';
import { castVote, errorMessage, isUnitScore, noScore, toVote, type Judge } from './types.ts';

export interface JudgeAgreement {
  judge_id: string;
  /** Items this judge scored (non-null). */
  n: number;
  spearman: number | null;
  mae_before: number | null;
  mae_after: number | null;
}

export interface CalibrationReport {
  method: CalibrationMethod;
  items: number;
  judges: JudgeAgreement[];
  /** Krippendorff's alpha (interval) across judges, on raw and on calibrated scores. */
  alpha_before: number | null;
  alpha_after: number | null;
  /** The trimmed-mean ensemble against gold. */
  ensemble: {
    n: number;
    spearman_before: number | null;
    spearman_after: number | null;
    mae_before: number | null;
    mae_after: number | null;
  };
  file: CalibrationFile;
}

/** One labelled item's raw votes (judge id → raw score or null) and its gold score. */
export interface LabelledVotes {
  votes: Record<string, number | null>;
  gold: number;
}

/** The task a trajectory was run on, rebuilt from its own fields, for judges that read only the prompt. */
function taskFromTrajectory(t: Trajectory): Task {
  return {
    id: t.task_id,
    env: t.env,
    split: t.split,
    difficulty: t.difficulty,
    seed: t.seed,
    prompt: t.task_description,
    data: {},
  };
}

/** Fits maps and measures agreement from votes already collected. Pure; tested on hand-computed values. */
export function calibrateFromVotes(
  judgeIds: string[],
  rows: LabelledVotes[],
  method: CalibrationMethod = 'isotonic',
): CalibrationReport {
  const maps: Record<string, CalibrationMap> = {};
  const judges: JudgeAgreement[] = judgeIds.map((id) => {
    const pairs = rows.flatMap((r) => (isUnitScore(r.votes[id]) ? [{ raw: r.votes[id] as number, gold: r.gold }] : []));
    const map = fitCalibrationMap(pairs, method);
    maps[id] = map;
    const raw = pairs.map((p) => p.raw);
    const gold = pairs.map((p) => p.gold);
    return {
      judge_id: id,
      n: pairs.length,
      spearman: spearman(raw, gold),
      mae_before: meanAbsoluteError(raw, gold),
      mae_after: meanAbsoluteError(
        raw.map((r) => applyCalibration(map, r)),
        gold,
      ),
    };
  });
  const rawMatrix = rows.map((r) => judgeIds.map((id) => (isUnitScore(r.votes[id]) ? (r.votes[id] as number) : null)));
  const calMatrix = rawMatrix.map((row) =>
    row.map((v, k) => (v === null ? null : applyCalibration(maps[judgeIds[k]], v))),
  );
  const ens = (matrix: (number | null)[][]) =>
    matrix.map((row) => trimmedMean(row.filter((v): v is number => v !== null)));
  const before = ens(rawMatrix);
  const after = ens(calMatrix);
  const scored = rows
    .map((r, i) => ({ gold: r.gold, before: before[i], after: after[i] }))
    .filter((s) => s.before !== null && s.after !== null);
  const golds = scored.map((s) => s.gold);
  return {
    method,
    items: rows.length,
    judges,
    alpha_before: krippendorffAlphaInterval(rawMatrix),
    alpha_after: krippendorffAlphaInterval(calMatrix),
    ensemble: {
      n: scored.length,
      spearman_before: spearman(
        scored.map((s) => s.before as number),
        golds,
      ),
      spearman_after: spearman(
        scored.map((s) => s.after as number),
        golds,
      ),
      mae_before: meanAbsoluteError(
        scored.map((s) => s.before as number),
        golds,
      ),
      mae_after: meanAbsoluteError(
        scored.map((s) => s.after as number),
        golds,
      ),
    },
    file: { version: 1, method, maps },
  };
}

export interface CalibrateOptions {
  method?: CalibrationMethod;
  /** The task of each trajectory; default rebuilt from the trajectory (`taskFromTrajectory`). */
  getTask?: (trajectory: Trajectory) => Task;
  /** Called after each item, for progress display. */
  onItem?: (done: number, total: number) => void;
}

/** A judge calibration can run: one that scores a trajectory, or a group judge (`judgeGroup`). */
export type CalibratableJudge = Judge | GroupJudge;

function isGroupJudge(judge: CalibratableJudge): judge is GroupJudge {
  return typeof (judge as Partial<GroupJudge>).judgeGroup === 'function';
}

/** Items a group judge sees in one call at most: a labelled file may hold many trajectories of one task. */
const CALIBRATION_GROUP_SIZE = 8;

/**
 * A group judge's vote on every item: the items of one task (same `task_id`), in file order and at most
 * CALIBRATION_GROUP_SIZE at a time, are judged together as a group, as in a run. Never throws.
 */
async function groupJudgeVotes(
  judge: GroupJudge,
  items: CalibrationItem[],
  getTask: (t: Trajectory) => Task,
): Promise<JudgeVote[]> {
  const byTask = new Map<string, number[]>();
  items.forEach((item, i) => byTask.set(item.trajectory.task_id, [...(byTask.get(item.trajectory.task_id) ?? []), i]));
  const votes: JudgeVote[] = new Array(items.length);
  for (const indices of byTask.values()) {
    for (let start = 0; start < indices.length; start += CALIBRATION_GROUP_SIZE) {
      const chunk = indices.slice(start, start + CALIBRATION_GROUP_SIZE);
      const trajectories = chunk.map((i) => items[i].trajectory);
      let got: JudgeVote[];
      try {
        got = await judge.judgeGroup(getTask(trajectories[0]), trajectories);
      } catch (err) {
        got = [];
        chunk.forEach((i) => (votes[i] = toVote(judge.id, noScore(`group judge threw: ${errorMessage(err)}`), 0)));
      }
      chunk.forEach(
        (i, k) => (votes[i] ??= got[k] ?? toVote(judge.id, noScore(`the group judge gave no vote for this item`), 0)),
      );
    }
  }
  return votes;
}

/**
 * Runs every judge on every labelled item (judges concurrently, items in order), then `calibrateFromVotes`.
 * Group judges score the items grouped by task first (`groupJudgeVotes`); their votes are calibrated like any other.
 */
export async function calibrate(
  judges: CalibratableJudge[],
  items: CalibrationItem[],
  options: CalibrateOptions = {},
): Promise<{ report: CalibrationReport; votes: JudgeVote[][] }> {
  const getTask = options.getTask ?? taskFromTrajectory;
  const allVotes: JudgeVote[][] = [];
  const rows: LabelledVotes[] = [];
  const grouped = new Map<GroupJudge, JudgeVote[]>();
  for (const j of judges) if (isGroupJudge(j)) grouped.set(j, await groupJudgeVotes(j, items, getTask));
  for (const [i, item] of items.entries()) {
    const votes = await Promise.all(
      judges.map((j) =>
        isGroupJudge(j) ? grouped.get(j)![i] : castVote(j, item.trajectory, getTask(item.trajectory)),
      ),
    );
    allVotes.push(votes);
    rows.push({ gold: item.gold, votes: Object.fromEntries(votes.map((v) => [v.judge_id, v.score])) });
    options.onItem?.(i + 1, items.length);
  }
  return {
    report: calibrateFromVotes(
      judges.map((j) => j.id),
      rows,
      options.method,
    ),
    votes: allVotes,
  };
}
