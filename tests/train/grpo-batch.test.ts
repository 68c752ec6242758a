import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type RunConfig } from '../../src/config/schema.ts';
import type { Trajectory } from '../../src/contracts.ts';
import { createRng } from '../../src/rng.ts';
import { replayAdvantage } from '../../src/train/advantages.ts';
import { buildGrpoBatch } from '../../src/train/grpo-batch.ts';
import { ReplayBuffer } from '../../src/train/replay-buffer.ts';
import { trajectory } from './fixtures.ts';

/** A tokenized trajectory: one prompt token, two assistant tokens. */
function scored(id: string, group: string, score: number | null, over: Partial<Trajectory> = {}): Trajectory {
  return trajectory({
    id,
    group_id: group,
    judge_score: score,
    tokens: [1, 2, 3],
    assistant_mask: [0, 1, 1],
    logprobs: [0, -1, -1],
    ...over,
  });
}

function config(zeroStd: RunConfig['grpo']['zero_std_groups']): RunConfig {
  return {
    ...DEFAULT_CONFIG,
    grpo: { ...DEFAULT_CONFIG.grpo, zero_std_groups: zeroStd, gamma: 1 },
    training: { ...DEFAULT_CONFIG.training, group_size: 2 },
  };
}

// Group a has signal (1 vs 0); group b is flat (0.5, 0.5); c's only trajectory could not be scored.
const groups = () => [
  [scored('a1', 'a', 1), scored('a0', 'a', 0)],
  [scored('b1', 'b', 0.5), scored('b2', 'b', 0.5)],
  [scored('c1', 'c', null)],
];

describe('buildGrpoBatch', () => {
  it('trains on groups with signal, skips flat ones, and leaves unscored trajectories out of every figure', () => {
    const batch = buildGrpoBatch({
      groups: groups(),
      replay: new ReplayBuffer({ capacity: 4, admit_threshold: 0 }),
      replayCount: 0,
      rng: createRng(1),
      config: config('skip'),
    });
    expect(batch.samples).toHaveLength(2);
    const [win, loss] = batch.samples.map((s) => Array.from(s.advantages ?? []));
    expect(win[1]).toBeGreaterThan(0);
    expect(loss[1]).toBeLessThan(0);
    expect(win[0]).toBe(0); // the prompt token carries no advantage
    expect(batch.scored.map((t) => t.id)).toEqual(['a1', 'a0', 'b1', 'b2']);
    expect(batch.metrics).toMatchObject({ reward: 0.5, frac_reward_zero_std: 0.5, 'replay/samples': 0 });
    // What was trained is reported per group for the run to store: the samples' own advantages; zeros for the flat group.
    expect(batch.groupAdvantages).toEqual([
      { group_id: 'a', advantages: { a1: win, a0: loss } },
      { group_id: 'b', advantages: { b1: [0, 0, 0], b2: [0, 0, 0] } },
    ]);
  });

  it('replaces a flat group with as many replay draws, each with the capped self-imitation advantage', () => {
    const replay = new ReplayBuffer({ capacity: 4, admit_threshold: 0 });
    const past = scored('old', 'old', 1);
    replay.offer(past);
    const cfg = config('replace');
    const batch = buildGrpoBatch({ groups: groups(), replay, replayCount: 0, rng: createRng(1), config: cfg });
    expect(batch.metrics['replay/samples']).toBe(2);
    expect(batch.samples).toHaveLength(4);
    const online = [1, 0, 0.5, 0.5];
    const mean = 0.5;
    const std = Math.sqrt(online.reduce((s, x) => s + (x - mean) ** 2, 0) / (online.length - 1));
    const expected = replayAdvantage(
      1,
      { mean, std },
      { mode: cfg.grpo.advantage, rewardScale: cfg.training.reward_scale },
      2,
    );
    expect(expected).toBeGreaterThan(0);
    for (const sample of batch.samples.slice(2)) expect(sample.advantages?.[2]).toBeCloseTo(expected, 6);
  });

  it('reports rollout success per environment beside the batch mean', () => {
    const g = [
      [scored('a1', 'a', 1, { success: true }), scored('a0', 'a', 0, { success: false })],
      [
        scored('s1', 's', 0.2, { env: 'shell_exec', success: false }),
        scored('s2', 's', 0.2, { env: 'shell_exec', success: false }),
      ],
    ];
    const batch = buildGrpoBatch({
      groups: g,
      replay: new ReplayBuffer({ capacity: 4, admit_threshold: 0 }),
      replayCount: 0,
      rng: createRng(1),
      config: config('skip'),
    });
    expect(batch.metrics).toMatchObject({
      'rollout/success': 0.25,
      'rollout/success/arith_tool': 0.5,
      'rollout/success/shell_exec': 0,
    });
  });

  it('asks the replay buffer for nothing in skip mode, however flat the groups', () => {
    const replay = new ReplayBuffer({ capacity: 4, admit_threshold: 0 });
    replay.offer(scored('old', 'old', 1));
    const batch = buildGrpoBatch({
      groups: groups(),
      replay,
      replayCount: 0,
      rng: createRng(1),
      config: config('skip'),
    });
    expect(batch.metrics['replay/samples']).toBe(0);
    expect(batch.samples).toHaveLength(2);
  });

  it("measures a replayed trajectory against its own environment's online scores, and skips it when none ran", () => {
    const replay = new ReplayBuffer({ capacity: 4, admit_threshold: 0 });
    replay.offer(scored('old-letters', 'old', 1, { env: 'letter_count' }));
    // This step: arith is all-or-nothing (mean 0.5), letter_count all at 0.9 but one 0.1.
    const step = [
      [scored('a1', 'a', 1), scored('a0', 'a', 0)],
      [scored('l1', 'l', 0.9, { env: 'letter_count' }), scored('l0', 'l', 0.1, { env: 'letter_count' })],
    ];
    const cfg = config('skip');
    const batch = buildGrpoBatch({ groups: step, replay, replayCount: 1, rng: createRng(1), config: cfg });
    const letters = { mean: 0.5, std: Math.sqrt(0.32) };
    const expected = replayAdvantage(1, letters, { mode: cfg.grpo.advantage, rewardScale: 1 }, 2);
    expect(batch.samples[4].advantages?.[2]).toBeCloseTo(expected, 6);
    expect(batch.metrics['replay/used']).toBe(1);
    const arithOnly = buildGrpoBatch({ groups: [step[0]], replay, replayCount: 1, rng: createRng(1), config: cfg });
    expect(arithOnly.metrics['replay/used']).toBe(0);
    expect(arithOnly.samples).toHaveLength(2);
  });

  it('folds process rewards into the score before the z-score, so a flat group with better tool use still teaches', () => {
    const ok = {
      step_id: 0,
      turn: 0,
      thought: null,
      observation: '2',
      timestamp: 0,
      tool_call: { tool_name: 'calc', parameters: {}, result: '2', error: null, latency_ms: 1 },
    };
    const failed = { ...ok, tool_call: { ...ok.tool_call, result: '', error: 'bad expression' } };
    const flat = [[scored('good-call', 'f', 0, { steps: [ok] }), scored('bad-call', 'f', 0, { steps: [failed] })]];
    const off = config('skip');
    expect(
      buildGrpoBatch({
        groups: flat,
        replay: new ReplayBuffer({ capacity: 1, admit_threshold: 0 }),
        replayCount: 0,
        rng: createRng(1),
        config: off,
      }).samples,
    ).toHaveLength(0);
    const on = { ...off, process_rewards: { ...off.process_rewards, enabled: true } };
    const batch = buildGrpoBatch({
      groups: flat,
      replay: new ReplayBuffer({ capacity: 1, admit_threshold: 0 }),
      replayCount: 0,
      rng: createRng(1),
      config: on,
    });
    expect(batch.samples).toHaveLength(2);
    expect(batch.samples[0].advantages?.[2]).toBeGreaterThan(0);
    expect(batch.samples[1].advantages?.[2]).toBeLessThan(0);
  });

  it('credits process rewards per turn when apply_to is turn: the turn with the working call gains, the ranking does not change', () => {
    // tokens: [p | a a | t | a a]: turn 0 calls a tool, turn 1 answers.
    const shape = {
      tokens: [1, 2, 3, 4, 5, 6],
      assistant_mask: [0, 1, 1, 0, 1, 1],
      logprobs: [0, -1, -1, 0, -1, -1],
      turn_spans: [
        [1, 3],
        [4, 6],
      ] as [number, number][],
    };
    const ok = {
      step_id: 0,
      turn: 0,
      thought: null,
      observation: '2',
      timestamp: 0,
      tool_call: { tool_name: 'calc', parameters: {}, result: '2', error: null, latency_ms: 1 },
    };
    const failed = { ...ok, tool_call: { ...ok.tool_call, result: '', error: 'bad expression' } };
    const group = [
      [scored('win', 'w', 1, { ...shape, steps: [ok] }), scored('lose', 'w', 0, { ...shape, steps: [failed] })],
    ];
    const base = config('skip');
    const cfg = {
      ...base,
      grpo: { ...base.grpo, gamma: 0.5 },
      process_rewards: { ...base.process_rewards, enabled: true, apply_to: 'turn' as const },
    };
    const batch = buildGrpoBatch({
      groups: group,
      replay: new ReplayBuffer({ capacity: 1, admit_threshold: 0 }),
      replayCount: 0,
      rng: createRng(1),
      config: cfg,
    });
    const [win, lose] = batch.samples.map((s) => Array.from(s.advantages ?? []));
    const a = 1 / Math.SQRT2; // z-score of 1 vs 0 with the sample std √0.5
    const bonus = 0.05 / Math.SQRT1_2; // the working call's 0.05 in advantage units (÷ the group std)
    expect(win[4]).toBeCloseTo(a, 5); // the answer turn: the advantage itself
    expect(win[1]).toBeCloseTo(bonus + 0.5 * a, 5); // the calling turn: its bonus plus the discounted outcome
    expect(lose[1]).toBeCloseTo(-0.5 * a, 5); // a failed call earns nothing
    expect(batch.metrics.reward).toBe(0.5); // the ranked score is untouched
  });

  it('sequence normalisation weighs every episode the same: the token-mean loss then averages episodes, not tokens', () => {
    const long = {
      tokens: [1, 2, 3, 4, 5, 6, 7],
      assistant_mask: [0, 1, 1, 1, 1, 1, 1],
      logprobs: [0, -1, -1, -1, -1, -1, -1],
    };
    const make = (normalization: RunConfig['grpo']['loss_normalization']) => {
      const cfg = config('skip');
      return buildGrpoBatch({
        groups: [[scored('short', 'a', 1), scored('long', 'a', 0, long)]],
        replay: new ReplayBuffer({ capacity: 4, admit_threshold: 0 }),
        replayCount: 0,
        rng: createRng(1),
        config: { ...cfg, grpo: { ...cfg.grpo, loss_normalization: normalization } },
      });
    };
    const tokenMean = make('token');
    const sequenceMean = make('sequence');
    // The update divides the sum over tokens by the update's 8 assistant tokens.
    const weight = (b: ReturnType<typeof make>, i: number) =>
      Array.from(b.samples[i].advantages!).reduce((a, x) => a + Math.abs(x), 0) / 8;
    // Token mean: the long failure's 6 tokens outweigh the short success's 2 three to one.
    expect(weight(tokenMean, 1) / weight(tokenMean, 0)).toBeCloseTo(3, 6);
    // Sequence mean: half each, and each the episode's own advantage (|A| = 0.707) times 1/B.
    expect(weight(sequenceMean, 0)).toBeCloseTo(weight(sequenceMean, 1), 6);
    expect(weight(sequenceMean, 0)).toBeCloseTo(Math.abs(tokenMean.samples[0].advantages![1]) / 2, 6);
    // What the run stores and shows is the credit itself, unscaled.
    expect(sequenceMean.groupAdvantages).toEqual(tokenMean.groupAdvantages);
  });

  it('refuses one step sampled at two temperatures (the log-probs would not be comparable)', () => {
    const mixed = [
      [
        scored('x1', 'x', 1),
        scored('x0', 'x', 0, { sampling: { temperature: 0.7, top_k: 0, top_p: 1, max_new_tokens: 16 } }),
      ],
    ];
    expect(() =>
      buildGrpoBatch({
        groups: mixed,
        replay: new ReplayBuffer({ capacity: 1, admit_threshold: 0 }),
        replayCount: 0,
        rng: createRng(1),
        config: config('skip'),
      }),
    ).toThrow(/different temperatures/);
  });

  it('scores a trajectory without tokens but makes no sample of it', () => {
    const batch = buildGrpoBatch({
      groups: [[scored('t1', 't', 1, { tokens: [], assistant_mask: [], logprobs: [] }), scored('t0', 't', 0)]],
      replay: new ReplayBuffer({ capacity: 1, admit_threshold: 0 }),
      replayCount: 0,
      rng: createRng(1),
      config: config('skip'),
    });
    expect(batch.scored).toHaveLength(2);
    expect(batch.samples).toHaveLength(1);
  });

  it('process bonuses never lift a gated failure above a group that succeeded', () => {
    const call = (ok: boolean) => ({
      step_id: 0,
      turn: 0,
      thought: 'x'.repeat(80),
      tool_call: { tool_name: 'calc', parameters: {}, result: '1', error: ok ? null : 'e', latency_ms: 1 },
      observation: '1',
      timestamp: 0,
    });
    const cfg = {
      ...config('skip'),
      process_rewards: {
        ...DEFAULT_CONFIG.process_rewards,
        enabled: true,
        apply_to: 'score' as const,
        tool_success_bonus: 0.3,
      },
    };
    // A success with no calls, and a failure (gated just under the mean) with many working calls.
    const win = scored('w', 'g', 1, { success: true });
    const busy = scored('f', 'g', 0.499, { success: false, steps: Array.from({ length: 4 }, () => call(true)) });
    const other = scored('o', 'g', 0.2, { success: false });
    const batch = buildGrpoBatch({
      groups: [[win, busy, other]],
      replay: new ReplayBuffer({ capacity: 4, admit_threshold: 0 }),
      replayCount: 0,
      rng: createRng(1),
      config: cfg,
    });
    const adv = batch.groupAdvantages[0].advantages;
    expect(Math.max(...adv.f)).toBeLessThanOrEqual(0);
    expect(Math.max(...adv.w)).toBeGreaterThan(0);
    // With the gate off, the bonuses count for everyone, as before.
    const open = buildGrpoBatch({
      groups: [[win, busy, other]],
      replay: new ReplayBuffer({ capacity: 4, admit_threshold: 0 }),
      replayCount: 0,
      rng: createRng(1),
      config: { ...cfg, judge: { ...cfg.judge, verifier_gate: false } },
    });
    expect(Math.max(...open.groupAdvantages[0].advantages.f)).toBeGreaterThan(0);
  });
});
