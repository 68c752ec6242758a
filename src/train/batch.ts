/**
 * Packs variable-length token sequences into the right-padded, shifted arrays the losses consume.
 * Pure JS (the tensors are made by the caller inside its tidy).
 *
 * Alignment: the model's `tokenStats(tokens [B, T])` returns values for tokens[:, 1:], i.e. [B, T−1];
 * so every per-token array of a sample (mask, sampling log-probs, advantages — all aligned with
 * `tokens`) is shifted by one here. Token 0 is never predicted, hence never trained (it is always a
 * prompt token anyway). Padding sits at the end, where causal attention keeps it from touching
 * earlier positions; its mask is 0.
 */

/** One sequence to train on; every array has `tokens.length` entries. */
export interface TrainSample {
  tokens: number[];
  /** 1 where the token's log-prob enters the loss (assistant tokens). */
  mask: ArrayLike<number>;
  /** Sampling log-probs (GRPO); absent for SFT. */
  oldLogp?: ArrayLike<number>;
  /** Per-token advantages (GRPO); absent for SFT. */
  advantages?: ArrayLike<number>;
}

export interface PackedBatch {
  B: number;
  /** Padded length; the shifted arrays are [B, T−1] row-major. */
  T: number;
  ids: number[][];
  mask: Float32Array;
  oldLogp: Float32Array;
  advantages: Float32Array;
  /** Masked tokens in this batch. */
  tokenCount: number;
}

export function packBatch(samples: readonly TrainSample[], padId: number, maxPositions: number): PackedBatch {
  if (samples.length === 0) throw new Error('batch: no samples to pack');
  // Each row as far as a pass needs it: within the window, up to its last trained token.
  samples = samples.map((s) => trainedPart(s, maxPositions));
  const T = Math.max(2, ...samples.map((s) => s.tokens.length));
  const B = samples.length;
  const W = T - 1;
  const mask = new Float32Array(B * W);
  const oldLogp = new Float32Array(B * W);
  const advantages = new Float32Array(B * W);
  let tokenCount = 0;
  const ids = samples.map((s, b) => {
    const n = s.tokens.length;
    if (s.mask.length !== n) throw new Error(`batch: sample ${b} has ${s.mask.length} mask entries for ${n} tokens`);
    for (let t = 1; t < n; t++) {
      const m = s.mask[t] ? 1 : 0;
      mask[b * W + t - 1] = m;
      tokenCount += m;
      if (s.oldLogp) oldLogp[b * W + t - 1] = m ? s.oldLogp[t] : 0;
      if (s.advantages) advantages[b * W + t - 1] = m ? s.advantages[t] : 0;
    }
    return n === T ? s.tokens.slice() : [...s.tokens, ...new Array<number>(T - n).fill(padId)];
  });
  return { B, T, ids, mask, oldLogp, advantages, tokenCount };
}

/**
 * The part of a sample a pass needs: cut to the model's window (the tail past it gets no gradient, the
 * rest trains as usual), and ending at its last trained token. What follows that token (an episode's last
 * tool response, appended after its last sampled turn) is never predicted and, attention being causal,
 * changes nothing before it; running it only cost time: a calc episode's reply made rows of up to 286
 * positions where 220 held every trained token.
 */
export function trainedPart(s: TrainSample, maxPositions: number): TrainSample {
  let end = Math.min(s.tokens.length, maxPositions);
  while (end > 1 && !s.mask[end - 1]) end--;
  if (end === s.tokens.length) return s;
  const cut = (a: ArrayLike<number> | undefined) => (a ? Array.from(a).slice(0, end) : undefined);
  return { tokens: s.tokens.slice(0, end), mask: cut(s.mask)!, oldLogp: cut(s.oldLogp), advantages: cut(s.advantages) };
}

/** Splits items into `parts` contiguous chunks of near-equal size (no empty chunk). */
export function chunk<T>(items: readonly T[], parts: number): T[][] {
  const k = Math.max(1, Math.min(parts, items.length));
  const out: T[][] = [];
  let start = 0;
  for (let i = 0; i < k; i++) {
    const size = Math.floor(items.length / k) + (i < items.length % k ? 1 : 0);
    out.push(items.slice(start, start + size));
    start += size;
  }
  return out;
}

/**
 * Splits micro-batches further until each holds at most `rowsFor(its longest length)` rows (the
 * memory budgets of update.ts). The loss is normalised by the whole update's token count, so the split
 * changes the time an update takes, not its gradient.
 */
export function splitForMemory<T extends { tokens: readonly number[] }>(
  batches: T[][],
  rowsFor: (length: number) => number,
): T[][] {
  return batches.flatMap((batch) => {
    const rows = Math.max(1, rowsFor(Math.max(...batch.map((s) => s.tokens.length))));
    return batch.length <= rows ? [batch] : chunk(batch, Math.ceil(batch.length / rows));
  });
}
