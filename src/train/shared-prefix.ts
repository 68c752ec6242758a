/**
 * A GRPO group's members share their prompt token for token, and an update used to run that prompt once
 * per member: with spindle-base's 124-token calc prompt and ~50-token answers, about two thirds of an
 * update's forward and backward work. Here a micro-batch is packed so each distinct prompt runs once:
 * the rows keep only what follows it, and the model reads the prompt's keys and values
 * (transformer.ts forwardAfterPrefix). The loss, gradients and metrics are those of the plain packing
 * (tests/train/shared-prefix.test.ts); only the work differs.
 *
 * A row's shareable prefix ends just before the position whose logits score its first trained token:
 * every position from there on needs its own logits, the ones before only lend keys and values.
 */
import { packBatch, trainedPart, type PackedBatch, type TrainSample } from './batch.ts';

export interface SharedPrefixLayout {
  /** [Np, P] distinct prefixes, right-padded. */
  ids: number[][];
  /** Real length of each prefix. */
  lengths: number[];
  /** Per row of the batch, the prefix it continues. */
  rowPrefix: number[];
}

/** A packed micro-batch; with `prefix`, `ids` and the shifted arrays hold each row after its prefix. */
export type TrainingBatch = PackedBatch & { prefix: SharedPrefixLayout | null };

/** Tokens before the position whose logits give the sample's first trained token (0 when none is trained). */
function shareableLength(s: TrainSample): number {
  for (let t = 1; t < s.tokens.length; t++) if (s.mask[t]) return t - 1;
  return 0;
}

/**
 * Packs `samples` with their shared prefixes run once, or plainly (packBatch) when no two rows share
 * one or a row has nothing to share.
 */
export function packSharingPrefixes(
  samples: readonly TrainSample[],
  padId: number,
  maxPositions: number,
): TrainingBatch {
  const cut = samples.map((s) => trainedPart(s, maxPositions));
  const lengths = cut.map(shareableLength);
  const keys = cut.map((s, b) => s.tokens.slice(0, lengths[b]).join(','));
  const firstRowOf = new Map<string, number>(); // each distinct prefix by the first row that has it, in order
  keys.forEach((k, b) => firstRowOf.has(k) || firstRowOf.set(k, b));
  if (lengths.some((n) => n === 0) || firstRowOf.size === cut.length)
    return { ...packBatch(cut, padId, maxPositions), prefix: null };
  const firstRows = [...firstRowOf.values()];
  const index = new Map([...firstRowOf.keys()].map((k, i) => [k, i]));
  const rowPrefix = keys.map((k) => index.get(k)!);
  const prefixLengths = firstRows.map((b) => lengths[b]);
  const P = Math.max(...prefixLengths);
  const ids = firstRows.map((b) => [
    ...cut[b].tokens.slice(0, lengths[b]),
    ...new Array<number>(P - lengths[b]).fill(padId),
  ]);
  const rest = cut.map((s, b) => {
    const from = lengths[b];
    const tail = (a: ArrayLike<number> | undefined) => (a ? Array.from(a).slice(from) : undefined);
    return {
      tokens: s.tokens.slice(from),
      mask: tail(s.mask)!,
      oldLogp: tail(s.oldLogp),
      advantages: tail(s.advantages),
    };
  });
  return { ...packBatch(rest, padId, maxPositions), prefix: { ids, lengths: prefixLengths, rowPrefix } };
}
