/**
 * Group-relative advantages for display, computed by the trainer's own pure math
 * (src/train/advantages.ts), plus the clipped surrogate the lesson walks through (src/train/clip.ts).
 */
import { groupAdvantages, type AdvantageMode } from '../../train/advantages.ts';

export interface GroupStats {
  mean: number;
  /** Sample standard deviation (n − 1), as the trainer uses. */
  std: number;
  advantages: number[];
  /** True when every score is equal: the group teaches nothing and GRPO skips it. */
  zeroStd: boolean;
  /** How many samples had no score and count as 0 here. */
  unscored: number;
}

export function groupStats(
  scores: readonly (number | null)[],
  mode: AdvantageMode = 'zscore',
  rewardScale = 1,
): GroupStats {
  if (scores.length === 0) return { mean: 0, std: 0, advantages: [], zeroStd: true, unscored: 0 };
  const unscored = scores.filter((s) => s === null || !Number.isFinite(s)).length;
  const result = groupAdvantages(
    scores.map((s) => (s !== null && Number.isFinite(s) ? s : 0)),
    { mode, rewardScale },
  );
  return { ...result, unscored };
}

/** The clipped surrogate per sample, from the trainer's clip range. */
export { clippedObjective } from '../../train/clip.ts';
