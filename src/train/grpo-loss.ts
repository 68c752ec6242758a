/**
 * The GRPO loss on per-token log-probabilities. Choices, in order:
 *
 * 1. Token-level clipped surrogate (PPO/GRPO): per assistant token t,
 *      ratio_t = exp(logp_t − old_logp_t),
 *      L_t = −min(ratio_t·A_t, clip(ratio_t, 1−ε, 1+ε_high)·A_t).
 *    ε = `grpo.clip_epsilon` (0.2); ε_high = `grpo.clip_epsilon_high` (DAPO's clip-higher, e.g. 0.28),
 *    or ε when null. The clip is the GRPO paper's (and Atropos's example trainer's), not plain
 *    REINFORCE.
 * 2. old_logp are the SAMPLING log-probabilities stored on the trajectory (Atropos: no second
 *    "old policy" forward). For fresh rollouts taken one update behind, ratio ≈ 1 and the clip only
 *    bites on stale data; for replayed trajectories it is the importance weight to the policy that
 *    sampled them. The log-ratio is clamped to ±20 so a masked or far-off-policy token cannot
 *    overflow exp() into inf·0 = NaN.
 * 3. A_t is per token (advantages.ts: group z-score spread over each turn with discounted returns and
 *    optional process rewards), not one scalar per sequence as in the GRPO paper.
 * 4. Normalisation: token-mean over the whole batch (DAPO; TRL's default `loss_type="dapo"`): the sum
 *    over every assistant token of the batch divided by their count, `tokenCount`, which with gradient
 *    accumulation is the count over ALL micro-batches of the update. The GRPO paper averages per
 *    sequence first, which weighs tokens of short completions more (a length bias).
 * 5. KL to the reference policy (the base model, LoRA disabled) with the k3 estimator
 *    `exp(ref − logp) − (ref − logp) − 1` (≥ 0, unbiased), added per token with weight β = `grpo.kl_beta`.
 *    Off by default (β = 0, as TRL and DAPO); the `kl` metric is logged whenever ref log-probs are given.
 * 6. Only assistant tokens (mask 1) count: prompt, tool-response and padding tokens add nothing.
 * 7. No entropy bonus; entropy (mean over assistant tokens, of the temperature-scaled distribution)
 *    is a metric only.
 * 8. Metrics use TRL's names: `clip_ratio/low_mean` (ratio < 1−ε where A < 0), `clip_ratio/high_mean`
 *    (ratio > 1+ε_high where A > 0), `clip_ratio/region_mean` (either), `kl`, `entropy`. They are
 *    returned as token SUMS so micro-batches add up; `finishMetrics` divides by the token count.
 */
import * as tf from '@tensorflow/tfjs';
import { clipRange } from './clip.ts';

export interface GrpoLossConfig {
  clipEpsilon: number;
  /** null: same as clipEpsilon. */
  clipEpsilonHigh: number | null;
  klBeta: number;
}

/** Aligned [B, T] tensors: entry (b, t) is about token t of sequence b. */
export interface GrpoInputs {
  /** Current policy log-prob of each token (temperature-scaled like the sampler). [B, T] */
  logp: tf.Tensor2D;
  /** Sampling log-prob of each token (Trajectory.logprobs). [B, T] */
  oldLogp: tf.Tensor2D;
  /** Per-token advantage (advantages.ts tokenAdvantages). [B, T] */
  advantages: tf.Tensor2D;
  /** 1 on assistant tokens, 0 on prompt / tool responses / padding. [B, T] */
  mask: tf.Tensor2D;
  /** Reference (LoRA off) log-probs; needed when klBeta > 0. [B, T] */
  refLogp?: tf.Tensor2D;
  /** Per-token entropy of the policy, for the metric. [B, T] */
  entropy?: tf.Tensor2D;
  /** Assistant tokens in the whole update (all micro-batches): the loss normaliser. */
  tokenCount: number;
}

/** The token sums behind the metrics; `finishMetrics` divides them by `tokens`. The tensor stacks them in this order. */
const GRPO_SUM_NAMES = ['clip_low', 'clip_high', 'clip_region', 'kl', 'entropy', 'tokens'] as const;
export type GrpoSums = Record<(typeof GRPO_SUM_NAMES)[number], number>;

export interface GrpoLossResult {
  /** Scalar loss (already divided by tokenCount). */
  loss: tf.Scalar;
  /** [6] token sums stacked in GRPO_SUM_NAMES order (read them with `readSums`); not part of the gradient. */
  sums: tf.Tensor1D;
}

const LOG_RATIO_LIMIT = 20;

export function grpoLoss(x: GrpoInputs, cfg: GrpoLossConfig): GrpoLossResult {
  if (!(x.tokenCount > 0))
    throw new Error('grpo loss: tokenCount must be > 0; a batch without assistant tokens has nothing to train on');
  if (cfg.klBeta > 0 && !x.refLogp)
    throw new Error('grpo loss: kl_beta > 0 needs reference log-probs (a forward pass with LoRA disabled)');
  const range = clipRange(cfg.clipEpsilon, cfg.clipEpsilonHigh);
  const { mask, advantages: adv } = x;

  const logRatio = tf.clipByValue(tf.mul(tf.sub(x.logp, x.oldLogp), mask), -LOG_RATIO_LIMIT, LOG_RATIO_LIMIT); // [B, T]
  const ratio = tf.exp(logRatio); // [B, T], 1 on masked tokens
  const unclipped = tf.mul(ratio, adv); // [B, T]
  const clipped = tf.mul(tf.clipByValue(ratio, range.low, range.high), adv); // [B, T]
  let perToken = tf.neg(tf.minimum(unclipped, clipped)); // [B, T]

  let klSum: tf.Scalar = tf.scalar(0);
  if (x.refLogp) {
    const d = tf.mul(tf.sub(x.refLogp, x.logp), mask); // [B, T]  ref − logp
    const kl = tf.sub(tf.sub(tf.exp(d), d), 1); // [B, T]  k3 ≥ 0, 0 on masked tokens
    if (cfg.klBeta > 0) perToken = tf.add(perToken, tf.mul(kl, cfg.klBeta));
    klSum = tf.sum(tf.mul(kl, mask)); // a metric: not in the returned loss, so no gradient flows from it
  }
  const loss = tf.div(tf.sum(tf.mul(perToken, mask)), x.tokenCount) as tf.Scalar;

  const sums = tf.tidy(() => {
    // Metrics only (tfjs has no stopGradient; nothing here reaches the returned loss).
    const r = ratio;
    const low = tf.logicalAnd(tf.less(r, range.low), tf.less(adv, 0)).toFloat(); // [B, T]
    const high = tf.logicalAnd(tf.greater(r, range.high), tf.greater(adv, 0)).toFloat(); // [B, T]
    const region = tf.maximum(low, high);
    const masked = (t: tf.Tensor) => tf.sum(tf.mul(t, mask));
    const named: Record<keyof GrpoSums, tf.Tensor> = {
      clip_low: masked(low),
      clip_high: masked(high),
      clip_region: masked(region),
      kl: klSum,
      entropy: x.entropy ? masked(x.entropy) : tf.scalar(0),
      tokens: tf.sum(mask),
    };
    return tf.stack(GRPO_SUM_NAMES.map((name) => named[name])) as tf.Tensor1D; // [6]
  });
  return { loss, sums };
}

/** The stacked sums tensor's values by name, added to `into` (micro-batches accumulate), or to zeros. */
export function readSums(values: ArrayLike<number>, into?: GrpoSums): GrpoSums {
  return Object.fromEntries(GRPO_SUM_NAMES.map((name, i) => [name, (into?.[name] ?? 0) + values[i]])) as GrpoSums;
}

/** Divides accumulated token sums into TRL-named metrics (`kl` / `entropy` only when measured). */
export function finishMetrics(sums: GrpoSums, opts: { hasRef: boolean; hasEntropy: boolean }): Record<string, number> {
  const tokens = sums.tokens || 1;
  const out: Record<string, number> = {
    'clip_ratio/low_mean': sums.clip_low / tokens,
    'clip_ratio/high_mean': sums.clip_high / tokens,
    'clip_ratio/region_mean': sums.clip_region / tokens,
  };
  if (opts.hasRef) out.kl = sums.kl / tokens;
  if (opts.hasEntropy) out.entropy = sums.entropy / tokens;
  return out;
}
