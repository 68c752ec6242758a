/**
 * Process rewards (`computeProcessRewards`): small bonuses that make a sparse
 * success/failure reward denser. Per step: `tool_success_bonus` (0.05) for a tool call without an
 * error, `thought_bonus` (0.02) for a `<think>` longer than `thought_min_chars` (50, strictly
 * longer); the terminal judge score is added to the last step.
 *
 * Pure numbers, no tfjs. Weights come from `RunConfig.process_rewards`.
 *
 * Two views:
 * - `computeProcessRewards` is one reward per step, terminal score included.
 * - `stepBonus` is one step's bonus; GRPO sums them into the score a trajectory is ranked by in its
 *   group (grpo-batch.ts `rankedScore`), before the group z-score.
 */
import type { Trajectory, TrajectoryStep } from '../contracts.ts';
import type { RunConfig } from '../config/schema.ts';

export type ProcessRewardWeights = Pick<RunConfig['process_rewards'], 'tool_success_bonus' | 'thought_bonus' | 'thought_min_chars'>;

/** The bonus one step earns (no terminal score). */
export function stepBonus(step: TrajectoryStep, w: ProcessRewardWeights): number {
  let r = 0;
  // Any falsy error counts as none: an empty error string is no error.
  if (step.tool_call && !step.tool_call.error) r += w.tool_success_bonus;
  if (step.thought && step.thought.length > w.thought_min_chars) r += w.thought_bonus;
  return r;
}

/**
 * One reward per step, the judge score added to the last one. A trajectory without steps (answered
 * directly) returns `[judge_score]`, so the judge score always has a place. A null judge score counts
 * as 0 here; callers should not train on unscored items.
 */
export function computeProcessRewards(trajectory: Pick<Trajectory, 'steps' | 'judge_score'>, w: ProcessRewardWeights): number[] {
  const terminal = trajectory.judge_score ?? 0;
  if (trajectory.steps.length === 0) return [terminal];
  const rewards = trajectory.steps.map((s) => stepBonus(s, w));
  rewards[rewards.length - 1] += terminal;
  return rewards;
}
