/**
 * Log-probabilities of given tokens under the current weights: what the GRPO and SFT losses are
 * built from. `tokenLogprobs` runs inside `tf.variableGrads`/`tf.tidy`; `sequenceLogprobs` is the
 * host-side convenience for reference (LoRA-off) log-probs and for checks.
 *
 * Targets are picked with a one-hot product rather than `gather`, whose gradient the wasm backend lacks.
 */
import * as tf from '@tensorflow/tfjs';
import type { TransformerModel } from './transformer.ts';

export interface LogprobOptions {
  /** false: LoRA adapters off (the reference policy for KL). Default: the model's `loraEnabled`. */
  useLora?: boolean;
  /** Divides the logits (the sampling temperature), as TRL does when it recomputes log-probs. */
  temperature?: number;
  /** Training forward: applies LoRA dropout with this seed. */
  dropoutSeed?: number;
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
export function tokenStats(model: TransformerModel, tokens: tf.Tensor2D | number[][], options: LogprobOptions = {}): TokenStats {
  const ids = Array.isArray(tokens) ? tf.tensor2d(tokens, undefined, 'int32') : tokens;
  const [B, T] = ids.shape;
  const V = model.config.vocabSize;
  const { logits } = model.forward(ids, { useLora: options.useLora, dropoutSeed: options.dropoutSeed }); // [B, T, V]
  const scaled = options.temperature && options.temperature !== 1 ? tf.div(logits, options.temperature) : logits;
  const logp = tf.logSoftmax(scaled.slice([0, 0, 0], [B, T - 1, V])); // [B, T-1, V]
  const targets = tf.oneHot(ids.slice([0, 1], [B, T - 1]).toInt(), V).toFloat(); // [B, T-1, V]
  const logprobs = tf.sum(tf.mul(logp, targets), -1) as tf.Tensor2D; // [B, T-1]
  const entropy = tf.neg(tf.sum(tf.mul(tf.exp(logp), logp), -1)) as tf.Tensor2D; // [B, T-1]
  return { logprobs, entropy };
}

/** tokens [B, T] → log-probs of tokens[:, 1:] — [B, T-1]. Use inside tf.variableGrads. */
export function tokenLogprobs(model: TransformerModel, tokens: tf.Tensor2D | number[][], options: LogprobOptions = {}): tf.Tensor2D {
  const { logprobs, entropy } = tokenStats(model, tokens, options);
  entropy.dispose();
  return logprobs;
}

/** Mean next-token cross-entropy over positions where mask is 1 (mask [B, T-1], default all). */
export function crossEntropyLoss(model: TransformerModel, tokens: tf.Tensor2D | number[][], mask?: tf.Tensor2D, options: LogprobOptions = {}): tf.Scalar {
  const logprobs = tokenLogprobs(model, tokens, options); // [B, T-1]
  if (!mask) return tf.neg(tf.mean(logprobs)) as tf.Scalar;
  return tf.neg(tf.div(tf.sum(tf.mul(logprobs, mask)), tf.maximum(tf.sum(mask), 1))) as tf.Scalar;
}

/**
 * Host-side log-probs of variable-length sequences: row b gets `seqs[b].length - 1` values, the
 * log-prob of each token after the first; positions where `masks[b][t+1]` is 0 read 0.
 * Batched (right-padded with `padId`) and tensor-clean.
 */
export async function sequenceLogprobs(
  model: TransformerModel,
  seqs: number[][],
  options: LogprobOptions & { masks?: number[][]; padId?: number } = {},
): Promise<number[][]> {
  if (seqs.length === 0) return [];
  const T = Math.max(...seqs.map((s) => s.length));
  if (T < 2) return seqs.map(() => []);
  const padded = seqs.map((s) => [...s, ...Array<number>(T - s.length).fill(options.padId ?? 0)]);
  const result = tf.tidy(() => tokenLogprobs(model, padded, options));
  const flat = await result.data();
  result.dispose();
  return seqs.map((s, b) =>
    Array.from({ length: s.length - 1 }, (_, t) => (options.masks && !options.masks[b][t + 1] ? 0 : flat[b * (T - 1) + t])),
  );
}
