/**
 * Group-relative advantages and per-step returns (a GRPO update's first step). Pure numbers, no tfjs.
 *
 * Choices:
 * 1. Scores are multiplied by `reward_scale` first (e.g. 2.5).
 *    Under z-score the scale cancels out; it matters for the mean-only advantage.
 * 2. Z-score: `(s − mean) / (std + 1e-8)` with the SAMPLE standard deviation (n − 1), as
 *    Python's `statistics.stdev` and TRL's `torch.std` (Atropos's numpy std is the population
 *    one). A group of one has no sample std: it counts as a zero-std group.
 * 3. Mean-only (`advantage: 'mean'`, Dr. GRPO / nanochat): `s − mean`, no division, so groups with a
 *    small spread do not get their noise amplified.
 * 4. A group whose scores are all equal (std < 1e-6) carries no signal: its advantages are all 0.
 *    It is flagged `zeroStd`, counted in `frac_reward_zero_std` (TRL's name), and the trainer skips it
 *    or replaces it from the replay buffer (`grpo.zero_std_groups`).
 * 5. Per-turn returns (credit per turn): discounted returns with the advantage as the final reward,
 *    `G_t = r_t + γ G_{t+1}`. A "step" here is an assistant TURN
 *    (one turn may hold several tool calls, and the final-answer turn has no tool step), because the
 *    turn is the unit of tokens the policy sampled. The terminal reward is the group advantage on the
 *    last turn, so a turn's credit is the trajectory's group-normalised outcome discounted by its
 *    distance to the end. Process rewards enter in one of two places (`process_rewards.apply_to`,
 *    grpo-batch.ts): folded into the score the group is ranked by (`score`: a flat group whose
 *    episodes differ in tool use still has spread), or as `r_t` of the turn that earned them
 *    (`turn`: per-step process rewards, in advantage units), so only that turn and the
 *    ones before it are credited.
 * 6. Every assistant token (mask 1) of turn t gets `G_t`; prompt and tool-response tokens get 0.
 * 7. Replayed trajectories have no group any more: they get the self-imitation advantage
 *    `max(0, s − mean_online) / (std + 1e-8)` (Oh et al. 2018, SIL) against the online batch — a
 *    replayed success is imitated only while it beats what the current policy achieves, and never
 *    pushed down.
 */
import type { Trajectory } from '../contracts.ts';

export type AdvantageMode = 'zscore' | 'mean';

export interface AdvantageOptions {
  mode: AdvantageMode;
  /** Multiplies every score first. */
  rewardScale: number;
}

/** Added to the std in the z-score denominator, so the division stays finite. */
export const STD_EPS = 1e-8;
/** A group std below this counts as "all scores equal". */
const ZERO_STD_TOL = 1e-6;

export interface GroupStats {
  mean: number;
  /** Sample standard deviation (n − 1); 0 for a group of one. */
  std: number;
  zeroStd: boolean;
}

export interface GroupAdvantages extends GroupStats {
  /** One per trajectory of the group, in order; all 0 when `zeroStd`. */
  advantages: number[];
}

export function mean(xs: readonly number[]): number {
  if (xs.length === 0) return 0;
  let sum = 0;
  for (const x of xs) sum += x;
  return sum / xs.length;
}

/** Sample standard deviation (divides by n − 1); 0 when there are fewer than two values. */
export function sampleStd(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  let ss = 0;
  for (const x of xs) ss += (x - m) ** 2;
  return Math.sqrt(ss / (xs.length - 1));
}

export function groupStats(scores: readonly number[]): GroupStats {
  const std = sampleStd(scores);
  return { mean: mean(scores), std, zeroStd: scores.length < 2 || std < ZERO_STD_TOL };
}

function checkScores(scores: readonly number[]): void {
  if (scores.length === 0)
    throw new Error('advantages: empty group; a GRPO group needs at least one scored trajectory');
  for (const s of scores) {
    if (!Number.isFinite(s)) {
      throw new Error(
        `advantages: score ${s} is not a finite number; drop unscored (null) trajectories before computing advantages`,
      );
    }
  }
}

/** Advantages of one group of scores (one task, G samples). */
export function groupAdvantages(rawScores: readonly number[], opts: AdvantageOptions): GroupAdvantages {
  checkScores(rawScores);
  const scores = rawScores.map((s) => s * opts.rewardScale);
  const stats = groupStats(scores);
  const advantages = scores.map((s) => {
    if (stats.zeroStd) return 0;
    return opts.mode === 'zscore' ? (s - stats.mean) / (stats.std + STD_EPS) : s - stats.mean;
  });
  return { ...stats, advantages };
}

/**
 * Self-imitation advantage for a replayed trajectory (choice 7): how much its scaled score beats the
 * online batch's mean, never negative. `std` is the online batch's spread (z-score mode only); when
 * the online batch has no spread the replayed item is compared without division, as in mean mode.
 */
export function replayAdvantage(
  score: number,
  online: { mean: number; std: number },
  opts: AdvantageOptions,
  groupSize?: number,
): number {
  const gap = Math.max(0, score * opts.rewardScale - online.mean);
  if (opts.mode === 'mean' || online.std < ZERO_STD_TOL) return gap;
  // A nearly flat online batch (std 0.02, say) would turn a replayed success into an advantage of 40
  // and swamp the update; it never gets more than the largest z-score a fresh group of this size can
  // give, (G−1)/√G (one success among G−1 failures).
  const cap = groupSize && groupSize > 1 ? (groupSize - 1) / Math.sqrt(groupSize) : Infinity;
  return Math.min(gap / (online.std + STD_EPS), cap);
}

/** `G_t = r_t + γ·G_{t+1}`, computed backwards; same length as `rewards`. */
export function discountedReturns(rewards: readonly number[], gamma: number): number[] {
  if (!(gamma >= 0 && gamma <= 1)) throw new Error(`advantages: gamma ${gamma} must lie in [0, 1] (grpo.gamma)`);
  const out = new Array<number>(rewards.length);
  let g = 0;
  for (let t = rewards.length - 1; t >= 0; t--) {
    g = rewards[t] + gamma * g;
    out[t] = g;
  }
  return out;
}

/**
 * Each assistant turn's credit (choice 5): `G_t = r_t + γ·G_{t+1}` with the group `advantage` added to
 * the last turn's reward. `turnRewards` (optional, one per turn, in advantage units) are per-turn
 * process rewards; without them this is the advantage discounted by each turn's distance to the end.
 */
export function turnCredits(
  nTurns: number,
  advantage: number,
  opts: { gamma: number; turnRewards?: readonly number[] },
): number[] {
  if (opts.turnRewards && opts.turnRewards.length !== nTurns) {
    throw new Error(
      `advantages: ${opts.turnRewards.length} turn rewards for ${nTurns} turns; give one per assistant turn`,
    );
  }
  return discountedReturns(
    Array.from({ length: nTurns }, (_, t) => (opts.turnRewards?.[t] ?? 0) + (t === nTurns - 1 ? advantage : 0)),
    opts.gamma,
  );
}

export type TokenTrajectory = Pick<Trajectory, 'tokens' | 'assistant_mask' | 'turn_spans'>;

/** How many credit entries a trajectory takes: one per assistant turn (one when it has no turn spans). */
export function creditTurns(trajectory: Pick<Trajectory, 'turn_spans'>): number {
  return Math.max(1, trajectory.turn_spans.length);
}

/**
 * The per-token advantage array aligned with `trajectory.tokens` (choice 6): `credits[t]` (from
 * `turnCredits`, one per turn) on the assistant tokens of turn t, 0 elsewhere. Without `turn_spans`
 * every assistant token belongs to one turn.
 */
export function tokenAdvantages(trajectory: TokenTrajectory, credits: readonly number[]): Float32Array {
  const { tokens, assistant_mask: mask, turn_spans: spans } = trajectory;
  if (mask.length !== tokens.length) {
    throw new Error(
      `advantages: assistant_mask has ${mask.length} entries for ${tokens.length} tokens; they must align`,
    );
  }
  if (credits.length !== creditTurns(trajectory)) {
    throw new Error(`advantages: ${credits.length} turn credits for a trajectory of ${creditTurns(trajectory)} turns`);
  }
  const out = new Float32Array(tokens.length);
  if (spans.length === 0) {
    for (let i = 0; i < mask.length; i++) if (mask[i]) out[i] = credits[0];
    return out;
  }
  spans.forEach(([start, end], t) => {
    if (start < 0 || end > tokens.length || start > end) {
      throw new Error(
        `advantages: turn span [${start}, ${end}) lies outside the ${tokens.length} tokens of the trajectory`,
      );
    }
    for (let i = start; i < end; i++) if (mask[i]) out[i] = credits[t];
  });
  return out;
}
