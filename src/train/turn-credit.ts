/**
 * Credit per turn, the one place it is computed: the trainer's samples (grpo-batch.ts), the token view
 * of a stored trajectory and the Learn screen all call this, so what a screen shows is what the update
 * used. A trajectory's credit is its group advantage (advantages.ts) spread over its assistant turns by
 * `turnCredits`: discounted by `grpo.gamma` with the distance to the end, plus, when
 * `process_rewards.apply_to` is `turn`, the process reward each turn earned (its steps' bonuses, in
 * advantage units: scaled like a score, divided by the group's std under z-score).
 */
import type { Trajectory } from '../contracts.ts';
import type { RunConfig } from '../config/schema.ts';
import { creditTurns, STD_EPS, turnCredits } from './advantages.ts';
import { episodeBonuses } from './process-rewards.ts';

export type CreditConfig = Pick<RunConfig, 'grpo' | 'process_rewards' | 'training'>;

/** Process-reward bonuses per assistant turn (steps grouped by their turn), in score units. */
export function turnBonuses(t: Pick<Trajectory, 'steps' | 'turn_spans' | 'success'>, cfg: CreditConfig): number[] {
  const out = new Array<number>(creditTurns(t)).fill(0);
  const bonuses = episodeBonuses(t, cfg.process_rewards);
  t.steps.forEach((step, i) => {
    out[Math.min(step.turn, out.length - 1)] += bonuses[i];
  });
  return out;
}

/** True when process rewards are credited to the turn that earned them rather than folded into the score. */
export function perTurnProcess(cfg: CreditConfig): boolean {
  return cfg.process_rewards.enabled && cfg.process_rewards.apply_to === 'turn';
}

/**
 * The credit of each turn of `t`, given its trajectory-level `advantage` and the spread (`std`, of the
 * scaled scores) it was normalised by; `std` only matters for per-turn process rewards under z-score.
 */
export function trajectoryCredits(
  t: Pick<Trajectory, 'steps' | 'turn_spans' | 'success'>,
  advantage: number,
  std: number,
  cfg: CreditConfig,
): number[] {
  const n = creditTurns(t);
  if (!perTurnProcess(cfg)) return turnCredits(n, advantage, { gamma: cfg.grpo.gamma });
  const unit = cfg.training.reward_scale / (cfg.grpo.advantage === 'zscore' ? std + STD_EPS : 1);
  return turnCredits(n, advantage, { gamma: cfg.grpo.gamma, turnRewards: turnBonuses(t, cfg).map((b) => b * unit) });
}
