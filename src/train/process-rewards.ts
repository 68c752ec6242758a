/**
 * Process rewards: small bonuses that make a sparse success/failure reward denser. Per step
 * (`stepBonus`): `tool_success_bonus` (0.05) for a tool call without an error, `thought_bonus` (0.02) for
 * a `<think>` longer than `thought_min_chars` (50, strictly longer). Per episode (`episodeBonuses`) also
 * `recovery_bonus` (0 by default) on the first working call after a failed one, in an episode that
 * succeeded: a retry that worked. A failed episode earns no recovery bonus, so failing a call on purpose
 * and then making a working one pays nothing unless the task gets done. GRPO sums the bonuses into the
 * score a trajectory is ranked by in its group (grpo-batch.ts `rankedScore`), before the group z-score,
 * or credits each to the turn that earned it (turn-credit.ts).
 *
 * Pure numbers, no tfjs. Weights come from `RunConfig.process_rewards`.
 */
import type { Trajectory, TrajectoryStep } from '../contracts.ts';
import type { RunConfig } from '../config/schema.ts';

export type ProcessRewardWeights = Pick<
  RunConfig['process_rewards'],
  'tool_success_bonus' | 'thought_bonus' | 'thought_min_chars' | 'recovery_bonus'
>;

/** The bonus one step earns on its own (no terminal score, no recovery). */
export function stepBonus(step: TrajectoryStep, w: Omit<ProcessRewardWeights, 'recovery_bonus'>): number {
  let r = 0;
  // Any falsy error counts as none: an empty error string is no error.
  if (step.tool_call && !step.tool_call.error) r += w.tool_success_bonus;
  if (step.thought && step.thought.length > w.thought_min_chars) r += w.thought_bonus;
  return r;
}

/** The bonus of each step of an episode, in step order: `stepBonus`, plus the recovery bonus where a retry worked. */
export function episodeBonuses(t: Pick<Trajectory, 'steps' | 'success'>, w: ProcessRewardWeights): number[] {
  let failedBefore = false;
  return t.steps.map((step) => {
    let r = stepBonus(step, w);
    if (!step.tool_call) return r;
    if (step.tool_call.error) failedBefore = true;
    else if (failedBefore) {
      failedBefore = false;
      if (t.success === true) r += w.recovery_bonus;
    }
    return r;
  });
}
