/**
 * Log-probabilities of given tokens under the current weights: what the GRPO and SFT losses are
 * built from. `tokenStats` runs inside `tf.variableGrads`/`tf.tidy`.
 *
 * Targets are picked with a one-hot product rather than `gather`, whose gradient the wasm backend lacks.
 */
import * as tf from '@tensorflow/tfjs';
import { hasFusedKernel, TOKEN_STATS_KERNEL } from '../kernels/fused.ts';
import { scoringTemperature } from './temperature.ts';
import type { SharedPrefixInput, TransformerModel } from './transformer.ts';

export interface LogprobOptions {
  /** false: LoRA adapters off (the reference policy for KL). Default: the model's `loraEnabled`. */
  useLora?: boolean;
  /** Divides the logits (the sampling temperature), as TRL does when it recomputes log-probs. */
  temperature?: number;
  /** Training forward: applies LoRA dropout with this seed. */
  dropoutSeed?: number;
  /**
   * [B, T−1], 1 where the value is wanted (a loss's mask). Where a backend fuses the statistics
   * (tfjs-wasm) the other positions are skipped and read 0; elsewhere they are computed. Either way a
   * caller must multiply by its mask, as the losses do.
   */
  active?: tf.Tensor2D;
  /** The rows continue these prefixes (train/shared-prefix.ts); the statistics are of the rows' own tokens. */
  prefix?: SharedPrefixInput;
}

export interface TokenStats {
  /** log p(tokens[:, t+1] | tokens[:, ≤t]) — [B, T-1] */
  logprobs: tf.Tensor2D;
  /** Entropy of the next-token distribution at each position — [B, T-1] */
  entropy: tf.Tensor2D;
}

/**
 * tokens [B, T] (right-padded; padding only affects positions after it) → per-token log-probs [B, T-1]
 * and entropies [B, T-1]. Differentiable with respect to `model.trainableVariables()`.
 */
export function tokenStats(
  model: TransformerModel,
  tokens: tf.Tensor2D | number[][],
  options: LogprobOptions = {},
): TokenStats {
  const ids = Array.isArray(tokens) ? tf.tensor2d(tokens, undefined, 'int32') : tokens;
  const [B, T] = ids.shape;
  const { logits } = model.forward(ids, {
    useLora: options.useLora,
    dropoutSeed: options.dropoutSeed,
    prefix: options.prefix,
  }); // [B, T, V]
  const targets = ids.slice([0, 1], [B, T - 1]).toInt() as tf.Tensor2D;
  const temperature = scoringTemperature(options.temperature);
  if (!hasFusedKernel(TOKEN_STATS_KERNEL)) return statsOfLogits(logits, targets, temperature);
  const active = options.active ?? tf.onesLike(targets).toFloat();
  const stats = tf.engine().runKernel(TOKEN_STATS_KERNEL, { logits, targets, active }, { temperature }) as tf.Tensor3D; // [3, B, T-1]
  const [logprobs, entropy] = [0, 1].map(
    (plane) => stats.slice([plane, 0, 0], [1, B, T - 1]).reshape([B, T - 1]) as tf.Tensor2D,
  );
  return { logprobs, entropy };
}

/** log-softmax of logits[:, :-1] / temperature: [B, T-1, V] (its temporaries freed before it returns). */
function logSoftmaxOf(logits: tf.Tensor, temperature: number): tf.Tensor {
  const [B, T, V] = logits.shape as [number, number, number];
  return tf.tidy(() => {
    const sliced = logits.slice([0, 0, 0], [B, T - 1, V]);
    return tf.logSoftmax(temperature === 1 ? sliced : tf.div(sliced, temperature));
  });
}

/**
 * Per-token log-probs of `targets` and entropies from logits [B, T, V], as one op whose gradient
 * recomputes the softmax from the saved logits. Why: autodiff through slice, log-softmax, one-hot and
 * the entropy's products kept about 15 copies of the [B, T, V] logits until the backward pass ended
 * (memory.ts), most of a long step at a 49,152- or 151,936-token vocabulary; this keeps the logits, and
 * its gradient frees each [B, T-1, V] temporary as soon as it is used (at most four at a time).
 * With s = logits/τ, p = softmax(s), l = log p, H = −Σ p·l:
 *   ∂ log p(target)/∂s = onehot − p,   ∂H/∂s_k = −p_k (l_k + H),   ∂/∂logits = ∂/∂s / τ.
 * The last position has no target, so its gradient is zero.
 */
function statsOfLogits(logits: tf.Tensor3D, targets: tf.Tensor2D, temperature: number): TokenStats {
  const V = logits.shape[2];
  const op = tf.customGrad(((z: tf.Tensor, save: tf.GradSaveFunc) => {
    save([z, targets]);
    const l = logSoftmaxOf(z, temperature); // [B, T-1, V]
    const logprobs = tf.tidy(() => tf.sum(tf.mul(l, tf.oneHot(targets, V).toFloat()), -1)); // [B, T-1]
    const entropy = tf.tidy(() => tf.neg(tf.sum(tf.mul(tf.exp(l), l), -1))); // [B, T-1]
    return {
      value: tf.stack([logprobs, entropy]), // [2, B, T-1]
      gradFunc: (dy: tf.Tensor, [savedZ, savedTargets]: tf.Tensor[]) => {
        const [dLogprob, dEntropy] = tf.tidy(() => tf.unstack(dy).map((d) => d.expandDims(-1))); // [B, T-1, 1] each
        const lg = logSoftmaxOf(savedZ, temperature);
        const p = tf.exp(lg);
        const entropyTerm = tf.tidy(() =>
          tf.mul(tf.mul(p, tf.add(lg, tf.neg(tf.sum(tf.mul(p, lg), -1, true)))), dEntropy),
        ); // dH · p (l + H)
        lg.dispose();
        const logprobTerm = tf.tidy(() =>
          tf.mul(tf.sub(tf.oneHot(savedTargets as tf.Tensor2D, V).toFloat(), p), dLogprob),
        ); // dlogp · (onehot − p)
        p.dispose();
        const ds = tf.tidy(() => {
          const d = tf.sub(logprobTerm, entropyTerm);
          return tf.pad(temperature === 1 ? d : tf.div(d, temperature), [
            [0, 0],
            [0, 1],
            [0, 0],
          ]); // [B, T, V]
        });
        tf.dispose([logprobTerm, entropyTerm, dLogprob, dEntropy]);
        return ds;
      },
    };
  }) as unknown as Parameters<typeof tf.customGrad>[0]);
  const [logprobs, entropy] = tf.unstack(op(logits)) as tf.Tensor2D[];
  return { logprobs, entropy };
}

/** tokens [B, T] → log-probs of tokens[:, 1:] — [B, T-1]. Use inside tf.variableGrads. */
function tokenLogprobs(
  model: TransformerModel,
  tokens: tf.Tensor2D | number[][],
  options: LogprobOptions = {},
): tf.Tensor2D {
  const { logprobs, entropy } = tokenStats(model, tokens, options);
  entropy.dispose();
  return logprobs;
}

/** Mean next-token cross-entropy over positions where mask is 1 (mask [B, T-1], default all). */
export function crossEntropyLoss(
  model: TransformerModel,
  tokens: tf.Tensor2D | number[][],
  mask?: tf.Tensor2D,
  options: LogprobOptions = {},
): tf.Scalar {
  const logprobs = tokenLogprobs(model, tokens, options); // [B, T-1]
  if (!mask) return tf.neg(tf.mean(logprobs)) as tf.Scalar;
  return tf.neg(tf.div(tf.sum(tf.mul(logprobs, mask)), tf.maximum(tf.sum(mask), 1))) as tf.Scalar;
}
