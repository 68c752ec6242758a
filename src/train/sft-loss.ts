/**
 * Supervised fine-tuning loss: cross-entropy on assistant tokens only (TRL's `assistant_only_loss`),
 * token-mean over the whole update (divided by `tokenCount`, the assistant tokens of all micro-batches),
 * the same normalisation as the GRPO loss so both accumulate the same way.
 */
import * as tf from '@tensorflow/tfjs';

/** logp [B, T−1] of each next token, mask [B, T−1] (1 on assistant tokens). */
export function sftLoss(logp: tf.Tensor2D, mask: tf.Tensor2D, tokenCount: number): tf.Scalar {
  if (!(tokenCount > 0)) throw new Error('sft loss: tokenCount must be > 0; the examples hold no assistant tokens');
  return tf.div(tf.neg(tf.sum(tf.mul(logp, mask))), tokenCount) as tf.Scalar;
}
