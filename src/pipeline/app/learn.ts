/**
 * The Learn screen's lesson from the store: the newest group a trainer consumed (step ≥ 0) in the newest
 * run that has one, with its trajectories, their tokens tinted by the credit the update put on them,
 * and a per-turn credit walkthrough for one multi-turn sample of each group. Ratios are not stored per
 * sample, so the lesson shows the first-pass ratio of 1 and says so. Every number comes from the
 * trainer's own functions (episode-turns.ts `groupCredits`, train/advantages.ts, train/turn-credit.ts).
 */
import type { Trajectory } from '../../contracts.ts';
import type { RunConfig } from '../../config/schema.ts';
import { getTrajectories, listGroups, listRuns, type Store } from '../../store/index.ts';
import { turnCredits } from '../../train/advantages.ts';
import { turnBonuses } from '../../train/turn-credit.ts';
import { creditConfig, groupCredits, type TrajectoryCredit } from './episode-turns.ts';
import { tokenDetail } from './trajectories.ts';

/** One turn of the walkthrough: how its credit is made of the outcome and the process rewards. */
export interface CreditTurn {
  /** 0-based turn index. */
  index: number;
  /** What the turn did: the tools it called (with "failed" on an error), or "answer". */
  summary: string;
  /** Turns after this one until the end. */
  distance: number;
  /** γ^distance. */
  discount: number;
  /** The group advantage discounted to this turn: γ^distance · A. */
  outcome: number;
  /** This turn's own process reward in score units (0 unless `process_rewards.apply_to` is `turn`). */
  bonus: number;
  /** What process rewards add to this turn's credit: its own and later turns', discounted, in advantage units. */
  process: number;
  /** The credit on this turn's tokens in the update (`trajectoryCredits`): outcome + process. */
  credit: number;
}

/** One real per-turn credit computation: group mean/std → advantage → γ^distance per turn → + process reward → credit. */
export interface CreditWalkthrough {
  /** Index of the sample in its group, and its trajectory. */
  sample: number;
  trajectory_id: string;
  /** The group's ranked scores, scaled (what mean and std are over); null for a sample that left the group unscored. */
  scores: (number | null)[];
  score: number;
  /** Its judges' score (before any process bonus folded into the ranked score). */
  judge_score: number;
  mean: number;
  std: number;
  mode: RunConfig['grpo']['advantage'];
  reward_scale: number;
  gamma: number;
  per_turn_process: boolean;
  advantage: number;
  /** True when every sample scored the same: the trainer skipped the group and every credit is 0. */
  flat: boolean;
  turns: CreditTurn[];
}

function summary(t: Trajectory, turn: number, last: number): string {
  const steps = t.steps.filter((s) => s.turn === turn && s.tool_call);
  if (!steps.length) return turn === last && t.final_response !== null ? 'answer' : 'text';
  return steps.map((s) => `${s.tool_call!.tool_name}${s.tool_call!.error ? ' (failed)' : ''}`).join(', ');
}

/**
 * The walkthrough for the group's sample with the most turns (the largest |advantage| among equals),
 * from the credits `groupCredits` gave the group. Null when no sample was credited.
 */
export function creditWalkthrough(group: readonly Trajectory[], credits: readonly TrajectoryCredit[], config: RunConfig): CreditWalkthrough | null {
  const candidates = group.map((t, i) => ({ t, i, c: credits[i] })).filter((x) => x.c.credits && x.c.group && x.c.advantage !== null && x.c.ranked !== null);
  if (!candidates.length) return null;
  const { t, i, c } = candidates.reduce((best, x) =>
    x.c.credits!.length > best.c.credits!.length || (x.c.credits!.length === best.c.credits!.length && Math.abs(x.c.advantage!) > Math.abs(best.c.advantage!)) ? x : best);
  const credit = c.credits!;
  const g = c.group!;
  const n = credit.length;
  // The outcome part alone is the trainer's turnCredits without turn rewards; process rewards are the rest.
  const outcome = turnCredits(n, c.advantage!, { gamma: g.gamma });
  const bonuses = g.perTurnProcess ? turnBonuses(t, config) : new Array<number>(n).fill(0);
  return {
    sample: i, trajectory_id: t.id, scores: credits.map((x) => x.ranked), score: c.ranked!, judge_score: t.judge_score ?? 0,
    mean: g.mean, std: g.std, mode: g.mode, reward_scale: g.rewardScale, gamma: g.gamma, per_turn_process: g.perTurnProcess,
    advantage: c.advantage!, flat: c.status === 'flat',
    turns: credit.map((value, k) => ({
      index: k, summary: summary(t, k, n - 1), distance: n - 1 - k, discount: g.gamma ** (n - 1 - k), outcome: outcome[k], bonus: bonuses[k],
      process: value - outcome[k], credit: value,
    })),
  };
}

/** A group as the lesson shows it: samples with their tokens tinted by their credits, and the walkthrough. */
export function lessonGroup(trajectories: Trajectory[], config: RunConfig, fallbackTask = '') {
  const credits = groupCredits(trajectories, config);
  return {
    env: trajectories[0]?.env ?? '',
    task: trajectories[0]?.task_description ?? fallbackTask,
    samples: trajectories.map((t, i) => ({
      trajectory_id: t.id, final_response: t.final_response, score: t.judge_score, ratio: null,
      tokens: tokenDetail(t, credits[i])?.pieces ?? null,
    })),
    credit: creditWalkthrough(trajectories, credits, config),
  };
}

/** The newest trained batch of the newest run that has one, or null. */
export async function latestLesson(store: Store) {
  const runs = (await listRuns(store)).sort((a, b) => b.updated - a.updated);
  for (const run of runs) {
    const groups = (await listGroups(store, run.id)).filter((g) => g.step >= 0 && g.scored);
    if (!groups.length) continue;
    const step = Math.max(...groups.map((g) => g.step));
    const batch = groups.filter((g) => g.step === step);
    const config = creditConfig(run.config);
    const lessonGroups = await Promise.all(batch.map(async (g) => {
      const trajectories = (await getTrajectories(store, g.trajectory_ids)).filter((t) => t !== undefined);
      return { ...lessonGroup(trajectories, config, g.task_id), env: g.env };
    }));
    return {
      run_id: run.id, step, groups: lessonGroups, advantage: config.grpo.advantage, reward_scale: config.training.reward_scale,
      clip_epsilon: config.grpo.clip_epsilon, clip_epsilon_high: config.grpo.clip_epsilon_high,
    };
  }
  return null;
}
