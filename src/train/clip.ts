/**
 * The clip range of the GRPO surrogate (grpo-loss.ts choice 1), and the surrogate for one scalar ratio
 * and advantage: the loss applies the same range per token, and the Learn screen walks through it per
 * sample, so both read the bounds from here. Pure numbers, no tfjs.
 */

/** `[1 − ε, 1 + ε_high]`, with ε_high = ε when null. */
export function clipRange(epsilon: number, epsilonHigh: number | null = null): { low: number; high: number } {
  return { low: 1 - epsilon, high: 1 + (epsilonHigh ?? epsilon) };
}

/** min(r·A, clip(r, 1−ε, 1+ε_high)·A) for one ratio and advantage, with its parts. */
export function clippedObjective(ratio: number, advantage: number, epsilon: number, epsilonHigh: number | null = null) {
  const { low, high } = clipRange(epsilon, epsilonHigh);
  const clippedRatio = Math.min(high, Math.max(low, ratio));
  const unclipped = ratio * advantage;
  const clipped = clippedRatio * advantage;
  const objective = Math.min(unclipped, clipped);
  return { clippedRatio, unclipped, clipped, objective, isClipped: objective !== unclipped, low, high };
}
