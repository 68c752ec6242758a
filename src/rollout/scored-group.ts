/**
 * Trajectory[] → ScoredGroup, Atropos's ScoredDataGroup with its exact field names, so the JSONL Spindle
 * writes is what an Atropos trajectory API server accepts:
 *
 * - `tokens`: the conversation's ChatML ids; `masks`: the id on policy-sampled tokens, -100 elsewhere.
 * - `inference_logprobs`: the sampling logprob on policy tokens, the placeholder 1.0 elsewhere.
 * - `scores`: judge_score × reward scale (`training.reward_scale`). An unjudged trajectory is an
 *   error, never a silent 0.
 * - `advantages`: per token when given (a per-sample number is broadcast over that sample's tokens).
 * - `generation_params`: the sampling parameters, which Atropos's trainer reads for temperature scaling.
 */
import type { ScoredGroup, Trajectory } from '../contracts.ts';

export interface ScoredGroupOptions {
  /** Multiplies every judge score. Default 1. */
  rewardScale?: number;
  /** One number per sample (broadcast over its tokens) or one array per sample (one value per token). */
  advantages?: number[] | number[][] | null;
  /** Include the chat messages (Atropos `include_messages`). Default true. */
  includeMessages?: boolean;
  envId?: number | null;
  overrides?: Record<string, unknown>[] | null;
  groupOverrides?: Record<string, unknown> | null;
}

/** Atropos's ignore index on non-policy tokens. */
export const MASK_IGNORE = -100;
/** Atropos's inference-logprob placeholder on non-policy tokens. */
export const LOGPROB_PLACEHOLDER = 1.0;

export function toScoredGroup(trajectories: readonly Trajectory[], options: ScoredGroupOptions = {}): ScoredGroup {
  if (trajectories.length === 0) throw new Error('toScoredGroup: a group needs at least one trajectory');
  const groupIds = new Set(trajectories.map((t) => t.group_id));
  if (groupIds.size > 1)
    throw new Error(
      `toScoredGroup: trajectories come from ${groupIds.size} groups (${[...groupIds].slice(0, 3).join(', ')}…); convert one group at a time`,
    );
  const rewardScale = options.rewardScale ?? 1;

  for (const t of trajectories) {
    if (t.judge_score === null)
      throw new Error(
        `toScoredGroup: trajectory ${t.id} has no judge_score; judge it first or leave it out of the group`,
      );
    if (t.tokens.length === 0)
      throw new Error(
        `toScoredGroup: trajectory ${t.id} has no tokens (its policy had no tokenizer); tokenized trajectories only`,
      );
    if (t.assistant_mask.length !== t.tokens.length || t.logprobs.length !== t.tokens.length) {
      throw new Error(
        `toScoredGroup: trajectory ${t.id} has ${t.tokens.length} tokens, ${t.assistant_mask.length} mask entries and ${t.logprobs.length} logprobs; they must be equal`,
      );
    }
  }

  const first = trajectories[0];
  return {
    tokens: trajectories.map((t) => t.tokens.slice()),
    masks: trajectories.map((t) => t.tokens.map((id, i) => (t.assistant_mask[i] === 1 ? id : MASK_IGNORE))),
    scores: trajectories.map((t) => (t.judge_score as number) * rewardScale),
    advantages: perTokenAdvantages(trajectories, options.advantages ?? null),
    ref_logprobs: null,
    messages: options.includeMessages === false ? null : trajectories.map((t) => t.messages.map((m) => ({ ...m }))),
    inference_logprobs: trajectories.map((t) =>
      t.logprobs.map((lp, i) => (t.assistant_mask[i] === 1 ? lp : LOGPROB_PLACEHOLDER)),
    ),
    generation_params: { ...first.sampling },
    overrides: options.overrides ?? null,
    group_overrides: options.groupOverrides ?? null,
    images: null,
    env_id: options.envId ?? null,
  };
}

function perTokenAdvantages(
  trajectories: readonly Trajectory[],
  advantages: number[] | number[][] | null,
): number[][] | null {
  if (advantages === null) return null;
  if (advantages.length !== trajectories.length) {
    throw new Error(
      `toScoredGroup: ${advantages.length} advantages for ${trajectories.length} trajectories; give one per trajectory`,
    );
  }
  return trajectories.map((t, i) => {
    const a = advantages[i];
    if (typeof a === 'number') return new Array<number>(t.tokens.length).fill(a);
    if (a.length !== t.tokens.length)
      throw new Error(`toScoredGroup: advantages[${i}] has ${a.length} values for ${t.tokens.length} tokens`);
    return a.slice();
  });
}
