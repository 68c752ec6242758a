/**
 * Scored groups as Atropos ScoredDataGroup JSONL: one group per line, the twelve field names exact,
 * so the file can be replayed into an Atropos trajectory API (`/scored_data`) or read by its tools.
 * Also builds a ScoredGroup from a group of trajectories, following Atropos's conventions: `masks`
 * holds the token id on policy-sampled tokens and -100 elsewhere; `inference_logprobs` holds the
 * sampling logprob on policy tokens and 1.0 as the placeholder elsewhere.
 */
import type { ScoredGroup, Trajectory } from '../contracts.ts';
import { importJsonlRows, textOf, toJsonl } from './jsonl.ts';
import { checkScoredGroup, normalizeScoredGroup } from './validate.ts';

export const ATROPOS_FIELDS = [
  'tokens',
  'masks',
  'scores',
  'advantages',
  'ref_logprobs',
  'messages',
  'inference_logprobs',
  'generation_params',
  'overrides',
  'group_overrides',
  'images',
  'env_id',
] as const satisfies readonly (keyof ScoredGroup)[];

export function scoredGroupFromTrajectories(
  group: Trajectory[],
  options: { scores?: number[]; advantages?: number[][] | null; env_id?: number | null } = {},
): ScoredGroup {
  const missing = group.find((t) => t.tokens.length === 0);
  if (missing)
    throw new Error(
      `trajectory ${missing.id} has no token ids: a scored group needs the policy's tokens (run with a tokenizer)`,
    );
  return {
    tokens: group.map((t) => [...t.tokens]),
    masks: group.map((t) => t.tokens.map((id, i) => (t.assistant_mask[i] ? id : -100))),
    scores: options.scores ?? group.map((t) => t.judge_score ?? 0),
    advantages: options.advantages ?? null,
    ref_logprobs: null,
    messages: group.map((t) => t.messages.map(({ role, content }) => ({ role, content }))),
    inference_logprobs: group.map((t) => t.logprobs.map((lp, i) => (t.assistant_mask[i] ? lp : 1.0))),
    generation_params: { ...group[0]?.sampling },
    overrides: null,
    group_overrides: null,
    images: null,
    env_id: options.env_id ?? null,
  };
}

/** One group per line, keys in Atropos's order. */
export function scoredGroupsToJsonl(groups: Iterable<ScoredGroup>): string {
  return toJsonl([...groups].map((g) => Object.fromEntries(ATROPOS_FIELDS.map((f) => [f, g[f] ?? null]))));
}

/** Parses and validates ScoredDataGroup JSONL (absent optional fields become null). */
export function parseScoredGroupsJsonl(data: string | Uint8Array | ArrayBuffer, file: string): ScoredGroup[] {
  return importJsonlRows<Record<string, unknown>>(textOf(data), file, checkScoredGroup).map((r) =>
    normalizeScoredGroup(r.value),
  );
}
