/**
 * Process rewards (`stepBonus`): small bonuses that make a sparse success/failure reward denser. Per
 * step: `tool_success_bonus` (0.05) for a tool call without an error, `thought_bonus` (0.02) for a
 * `<think>` longer than `thought_min_chars` (50, strictly longer). GRPO sums them into the score a
 * trajectory is ranked by in its group (grpo-batch.ts `rankedScore`), before the group z-score, or
 * credits each to the turn that earned it (turn-credit.ts).
 *
 * Pure numbers, no tfjs. Weights come from `RunConfig.process_rewards`.
 */
import type { TrajectoryStep } from '../contracts.ts';
import type { RunConfig } from '../config/schema.ts';

export type ProcessRewardWeights = Pick<
  RunConfig['process_rewards'],
  'tool_success_bonus' | 'thought_bonus' | 'thought_min_chars'
>;

/** The bonus one step earns (no terminal score). */
export function stepBonus(step: TrajectoryStep, w: ProcessRewardWeights): number {
  let r = 0;
  // Any falsy error counts as none: an empty error string is no error.
  if (step.tool_call && !step.tool_call.error) r += w.tool_success_bonus;
  if (step.thought && step.thought.length > w.thought_min_chars) r += w.thought_bonus;
  return r;
}
