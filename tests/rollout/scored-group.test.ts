import { describe, expect, it } from 'vitest';
import { LOGPROB_PLACEHOLDER, MASK_IGNORE, toScoredGroup } from '../../src/rollout/scored-group.ts';
import { fakeTrajectory } from './helpers.ts';

describe('toScoredGroup', () => {
  const a = fakeTrajectory({ id: 'a', judge_score: 1 });
  const b = fakeTrajectory({
    id: 'b',
    judge_score: 0.25,
    tokens: [20, 21, 22],
    assistant_mask: [0, 1, 1],
    logprobs: [0, -1, -2],
    turn_spans: [[1, 3]],
  });

  it('uses Atropos field names, -100 masks and 1.0 logprob placeholders', () => {
    const g = toScoredGroup([a, b], { rewardScale: 2, envId: 3 });
    expect(Object.keys(g).sort()).toEqual(
      [
        'advantages',
        'env_id',
        'generation_params',
        'group_overrides',
        'images',
        'inference_logprobs',
        'masks',
        'messages',
        'overrides',
        'ref_logprobs',
        'scores',
        'tokens',
      ].sort(),
    );
    expect(g.tokens).toEqual([a.tokens, b.tokens]);
    expect(g.masks).toEqual([
      [MASK_IGNORE, MASK_IGNORE, 12, 13, MASK_IGNORE],
      [MASK_IGNORE, 21, 22],
    ]);
    expect(g.inference_logprobs).toEqual([
      [LOGPROB_PLACEHOLDER, LOGPROB_PLACEHOLDER, -0.5, -0.25, LOGPROB_PLACEHOLDER],
      [LOGPROB_PLACEHOLDER, -1, -2],
    ]);
    expect(g.scores).toEqual([2, 0.5]);
    expect(g.advantages).toBeNull();
    expect(g.messages?.[0]).toEqual(a.messages);
    expect(g.generation_params).toEqual({ temperature: 0.7, top_k: 0, top_p: 1, max_new_tokens: 64 });
    expect(g.env_id).toBe(3);
    expect(g.images).toBeNull();
    // Plain data: survives JSON.
    expect(JSON.parse(JSON.stringify(g))).toEqual(g);
  });

  it('broadcasts per-sample advantages over tokens and checks per-token ones', () => {
    const g = toScoredGroup([a, b], { advantages: [0.5, -0.5] });
    expect(g.advantages).toEqual([new Array(5).fill(0.5), new Array(3).fill(-0.5)]);
    expect(toScoredGroup([b], { advantages: [[1, 2, 3]] }).advantages).toEqual([[1, 2, 3]]);
    expect(() => toScoredGroup([b], { advantages: [[1, 2]] })).toThrow(/2 values for 3 tokens/);
    expect(() => toScoredGroup([a, b], { advantages: [1] })).toThrow(/1 advantages for 2 trajectories/);
  });

  it('can leave messages out', () => {
    expect(toScoredGroup([a], { includeMessages: false }).messages).toBeNull();
  });

  it('refuses unjudged, untokenized, misaligned or mixed groups with a reason', () => {
    expect(() => toScoredGroup([fakeTrajectory({ judge_score: null })])).toThrow(/no judge_score/);
    expect(() => toScoredGroup([fakeTrajectory({ tokens: [], assistant_mask: [], logprobs: [] })])).toThrow(
      /no tokens/,
    );
    expect(() => toScoredGroup([fakeTrajectory({ logprobs: [0] })])).toThrow(/must be equal/);
    expect(() => toScoredGroup([a, fakeTrajectory({ group_id: 'other' })])).toThrow(/2 groups/);
    expect(() => toScoredGroup([])).toThrow(/at least one/);
  });
});
