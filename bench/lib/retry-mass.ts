/**
 * Where a GRPO update's push lands after a failed call: of the training groups a run saw, the
 * advantage-weighted assistant tokens on the turns after an episode's first failed call, split by what
 * the episode did there (made another call, or answered at once), under the loss normalisation the run
 * used. A negative net on the retried episodes says the update makes a retry less likely than it makes
 * giving up; that is the diagnosis the ablation's variants are measured against.
 *
 * Mass of a token: its advantage times its weight in the loss, 1 / (the group's assistant tokens) under
 * token normalisation, 1 / (episodes · the episode's tokens) under sequence normalisation, so the figures
 * of the two are on one scale (each group's weights sum to 1).
 */
import type { RunConfig } from '../../src/config/schema.ts';
import type { Trajectory } from '../../src/contracts.ts';
import { scoreGroup } from '../../src/train/grpo-batch.ts';

export interface PostFailureMass {
  /** Net mass on the turns after the first failed call, in episodes that made another call. */
  retried: number;
  /** The same in episodes that answered without another call. */
  gave_up: number;
  /** Episodes of each kind in the trained (non-flat) groups. */
  retried_episodes: number;
  gave_up_episodes: number;
  /** Trained groups. */
  groups: number;
}

const assistantTokens = (t: Trajectory, fromTurn = 0): number =>
  t.turn_spans.slice(fromTurn).reduce((n, [start, end]) => {
    for (let i = start; i < end; i++) n += t.assistant_mask[i] ? 1 : 0;
    return n;
  }, 0);

export function postFailureMass(groups: readonly Trajectory[][], cfg: RunConfig): PostFailureMass {
  const out: PostFailureMass = { retried: 0, gave_up: 0, retried_episodes: 0, gave_up_episodes: 0, groups: 0 };
  for (const group of groups) {
    const { scored, advantages } = scoreGroup(group, cfg);
    if (advantages.zeroStd || scored.length === 0) continue;
    out.groups++;
    const tokens = scored.map((t) => assistantTokens(t));
    const total = tokens.reduce((a, b) => a + b, 0);
    scored.forEach((t, i) => {
      const calls = t.steps.filter((s) => s.tool_call !== null);
      const firstFailure = calls.find((s) => s.tool_call!.error !== null);
      if (!firstFailure || tokens[i] === 0) return;
      const weight =
        cfg.grpo.loss_normalization === 'sequence' ? 1 / (scored.length * tokens[i]) : total > 0 ? 1 / total : 0;
      const mass = advantages.advantages[i] * weight * assistantTokens(t, firstFailure.turn + 1);
      if (calls.indexOf(firstFailure) < calls.length - 1) {
        out.retried += mass;
        out.retried_episodes++;
      } else {
        out.gave_up += mass;
        out.gave_up_episodes++;
      }
    });
  }
  return out;
}
