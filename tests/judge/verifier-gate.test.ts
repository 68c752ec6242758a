/**
 * The verifier gates success (src/judge/verifier-gate.ts): where the environment can verify, the judges
 * shape the score only inside its verdict; a failure never outscores a success and never gets a positive
 * advantage in a group that has a success. Checked on the rule itself, on the example (the
 * environment scored a wrong answer 0.2, a lenient judge lifted the combined score to 0.9 and the
 * advantage to +1.04), and through the rollout worker with a real lenient judge on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import { isSuccess, type JudgeVote, type Trajectory } from '../../src/contracts.ts';
import { getEnvironment } from '../../src/envs/registry.ts';
import { judgeGroupStep } from '../../src/judge/group-step.ts';
import {
  capFailures,
  FAILURE_CEILING,
  gateByVerifier,
  groupScoresFromVotes,
  scoreFromVotes,
  SUCCESS_FLOOR,
  verifierDisagrees,
} from '../../src/judge/verifier-gate.ts';
import { ByteTokenizer } from '../../src/tokenizer/byte-tokenizer.ts';
import { creditConfig, groupCredits } from '../../src/pipeline/app/episode-turns.ts';
import type { EpisodeJob, RolloutSettings } from '../../src/pipeline/engine/rollout-protocol.ts';
import { RolloutWorkerCore } from '../../src/pipeline/engine/rollout-worker.ts';
import { ScriptedPolicy } from '../../src/rollout/scripted-policy.ts';
import { scoreGroup } from '../../src/train/grpo-batch.ts';
import { startChatServer, type ChatServer } from './chat-server.ts';
import { makeTask, makeTrajectory } from './fixtures.ts';

const vote = (judge_id: string, score: number | null): JudgeVote => ({ judge_id, score, rationale: '', latency_ms: 0 });
const env = (score: number) => vote('env:arith', score);

/** A trajectory as the judging path leaves it: its votes, the gated score, success from the environment. */
function member(id: string, judges: number[], envScore: number | null): Trajectory {
  const votes = [...judges.map((s, i) => vote(`judge-${i}`, s)), ...(envScore === null ? [] : [env(envScore)])];
  return makeTrajectory({
    id,
    votes,
    judge_score: scoreFromVotes(votes, { minVotes: 1, gate: true }),
    success: isSuccess(envScore),
  });
}

describe('gateByVerifier (one trajectory)', () => {
  it('leaves the judges alone where the environment cannot verify, and a null stays null', () => {
    expect(gateByVerifier(null, 0.93)).toBe(0.93);
    expect(gateByVerifier(0.2, null)).toBeNull();
  });

  it('keeps a success in [SUCCESS_FLOOR, 1] and a failure within the margin of the environment and below every success', () => {
    expect(gateByVerifier(1, 0.1)).toBe(SUCCESS_FLOOR);
    expect(gateByVerifier(1, 0.95)).toBe(0.95);
    expect(gateByVerifier(0, 1)).toBeCloseTo(0.2, 12);
    expect(gateByVerifier(0.2, 0.9)).toBeCloseTo(0.4, 12);
    expect(gateByVerifier(0.5, 0)).toBeCloseTo(0.3, 12);
    expect(gateByVerifier(0.9, 1)).toBe(FAILURE_CEILING);
    for (let e = 0; e < 1; e += 0.05) {
      for (let j = 0; j <= 1; j += 0.05) expect(gateByVerifier(e, j)!).toBeLessThan(gateByVerifier(1, 0)!);
    }
  });

  it('changes nothing for the rule judge alone: its 0.8·verdict + 0.2·format lies inside the band', () => {
    for (const e of [0, 0.25, 0.5, 1]) {
      for (const format of [0, 0.5, 1]) {
        const rule = 0.8 * e + 0.2 * format;
        expect(gateByVerifier(e, rule)).toBeCloseTo(rule, 12);
      }
    }
  });
});

describe("the issue's example: a wrong answer the environment scored 0.2", () => {
  // The rule judge and a lenient remote judge combined to 0.9; the environment said 0.2.
  const wrong = [0.8, 1.0];

  it("scores it inside the environment's verdict instead of 0.9", () => {
    const ungated = scoreFromVotes([vote('rule', 0.8), vote('remote', 1), env(0.2)], { minVotes: 1, gate: false });
    expect(ungated).toBeCloseTo(0.9, 12);
    const gated = scoreFromVotes([vote('rule', 0.8), vote('remote', 1), env(0.2)], { minVotes: 1, gate: true })!;
    expect(gated).toBeLessThanOrEqual(0.2 + 0.2 + 1e-12);
    expect(gated).toBeLessThan(SUCCESS_FLOOR);
  });

  it("gets no positive advantage in a group where another sample succeeded (the trainer's own scoreGroup)", async () => {
    const group = [
      member('right', [1, 1], 1),
      member('wrong', wrong, 0.2),
      member('fail-a', [0.2, 0], 0),
      member('fail-b', [0, 0], 0),
    ];
    // Without the gate: 0.9 beside a success at 1 and failures at 0.1 and 0 — a positive advantage (the issue's +1.04).
    const open = await judgeGroupStep(makeTask(), group, { groupJudges: [], minVotes: 1, gate: false });
    const before = scoreGroup(open, DEFAULT_CONFIG);
    expect(open[1].judge_score).toBeCloseTo(0.9, 12);
    expect(before.advantages.advantages[1]).toBeGreaterThan(0.5);
    // With it: the band alone would leave 0.4 above this group's mean; the group rule takes it to the mean.
    const gated = await judgeGroupStep(makeTask(), group, { groupJudges: [], minVotes: 1, gate: true });
    const after = scoreGroup(gated, DEFAULT_CONFIG);
    expect(gated[1].judge_score!).toBeLessThanOrEqual(0.4);
    expect(after.advantages.advantages[1]).toBeLessThanOrEqual(0);
    expect(after.advantages.advantages[0]).toBeGreaterThan(0);
    expect(Math.min(...gated.filter((t) => t.success).map((t) => t.judge_score!))).toBeGreaterThan(
      Math.max(...gated.filter((t) => !t.success).map((t) => t.judge_score!)),
    );
    // The environment's vote is kept beside the judges', and the views can flag the disagreement.
    expect(gated[1].votes.find((v) => v.judge_id === 'env:arith')?.score).toBe(0.2);
    expect(verifierDisagrees(gated[1].votes)).toBe(true);
    expect(verifierDisagrees(gated[2].votes)).toBe(false);
  });
});

describe('the group rule', () => {
  it('never leaves a verified failure with a positive advantage when the group has a success, for any group size', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let trial = 0; trial < 300; trial++) {
      const n = 2 + Math.floor(random() * 15);
      const group = Array.from({ length: n }, (_, i) => {
        const envScore = i === 0 ? 1 : random() < 0.3 ? 1 : random() < 0.5 ? 0 : (Math.round(random() * 10) / 10) * 0.9;
        return [vote('a', random()), vote('b', random() < 0.1 ? null : random()), env(envScore)];
      });
      const scores = groupScoresFromVotes(group, { minVotes: 1, gate: true });
      const trajectories = group.map((votes, i) => makeTrajectory({ id: `t${i}`, votes, judge_score: scores[i] }));
      const { scored, advantages } = scoreGroup(trajectories, DEFAULT_CONFIG);
      scored.forEach((t, i) => {
        const e = t.votes.find((v) => v.judge_id === 'env:arith')!.score!;
        if (!isSuccess(e)) expect(advantages.advantages[i]).toBeLessThanOrEqual(0);
      });
    }
  });

  it("keeps the judges' order among the lower failures, and is idempotent", () => {
    const members = [
      { env: 1, score: 0.8 },
      { env: 0, score: 0.2 },
      { env: 0, score: 0.15 },
      ...Array.from({ length: 6 }, () => ({ env: 0, score: 0 })),
    ];
    const capped = capFailures(members);
    expect(capped[1]).toBeLessThan(0.2);
    expect(capped[1]).toBeGreaterThanOrEqual(capped[2]!);
    expect(capFailures(members.map((m, i) => ({ ...m, score: capped[i] })))).toEqual(capped);
    // No success in the group: the judges rank the failures freely.
    expect(capFailures(members.slice(1))).toEqual(members.slice(1).map((m) => m.score));
  });
});

describe("the Playground's sampled group (each episode judged on its own)", () => {
  it('shows the credits the group rule gives: no failure above zero beside a success', () => {
    const group = [
      member('right', [1], 1),
      member('wrong', [1, 1], 0.5),
      ...Array.from({ length: 6 }, (_, i) => member(`f${i}`, [0], 0)),
    ];
    expect(group[1].judge_score).toBeCloseTo(0.7, 12);
    const credits = groupCredits(group, creditConfig());
    expect(credits[1].advantage!).toBeLessThanOrEqual(0);
    expect(credits[0].advantage!).toBeGreaterThan(0);
    // With the gate off the screen shows the scores as judged.
    const open = groupCredits(group, creditConfig({ judge: { ...DEFAULT_CONFIG.judge, verifier_gate: false } }));
    expect(open[1].advantage!).toBeGreaterThan(0);
  });
});

describe('through the rollout worker, with a lenient judge on 127.0.0.1', () => {
  let server: ChatServer;
  beforeAll(async () => {
    server = await startChatServer('{"overall": 1.0, "rationale": "Looks great."}');
  });
  afterAll(async () => {
    await server.close();
  });

  it("keeps the environment's vote, gates the lenient judge, and the group step leaves the wrong answer no positive advantage", async () => {
    const arith = getEnvironment('arith_tool');
    const task = arith.generate(11, 1, 'train');
    const wrong = String((task.data.answer as number) + 7);
    const tokenizer = new ByteTokenizer();
    const core = new RolloutWorkerCore(
      new ScriptedPolicy({ id: 'wrong', turns: [`The answer is ${wrong}.`], tokenizer }),
    );
    const judges = [
      { type: 'rule', id: 'rule' } as const,
      {
        type: 'remote',
        id: 'lenient',
        base_url: server.baseUrl,
        model: 'm',
        api_key_env: null,
        temperature: 0,
        timeout_ms: 2_000,
        max_concurrency: 2,
        max_retries: 0,
      } as const,
    ];
    const settings = (gate: boolean): RolloutSettings => ({
      run_id: null,
      max_steps: 4,
      tool_timeout_ms: 2_000,
      tools: [],
      judges: [...judges],
      n_judges: null,
      min_votes: 1,
      verifier_gate: gate,
      environments: [],
    });
    const job = (i: number, policy: EpisodeJob['policy']): EpisodeJob => ({
      trajectory_id: `t${i}`,
      task,
      seed: i,
      group_id: 'g',
      sampling: DEFAULT_CONFIG.sampling,
      policy,
      judging: 'configured',
    });
    await core.configure(settings(true));
    const rolled = [
      await core.runEpisode(job(0, 'expert')),
      await core.runEpisode(job(1, 'model')),
      await core.runEpisode(job(2, 'model')),
    ];
    const wrongOne = rolled[1];
    expect(wrongOne.success).toBe(false);
    expect(wrongOne.votes.map((v) => v.judge_id)).toEqual(['rule', 'lenient', 'env:arith_tool']);
    expect(wrongOne.votes.find((v) => v.judge_id === 'lenient')?.score).toBe(1);
    const envScore = wrongOne.votes.find((v) => v.judge_id === 'env:arith_tool')!.score!;
    expect(wrongOne.judge_score!).toBeLessThanOrEqual(envScore + 0.2 + 1e-12);
    // With the gate off the same episode takes the lenient judge's word.
    await core.configure(settings(false));
    const open = await core.runEpisode(job(1, 'model'));
    expect(open.judge_score!).toBeGreaterThan(wrongOne.judge_score!);

    const group = await judgeGroupStep(task, rolled, { groupJudges: [], minVotes: 1, gate: true });
    const { advantages } = scoreGroup(group, DEFAULT_CONFIG);
    expect(group[0].success).toBe(true);
    expect(advantages.advantages[0]).toBeGreaterThan(0);
    expect(advantages.advantages[1]).toBeLessThanOrEqual(0);
    expect(advantages.advantages[2]).toBeLessThanOrEqual(0);
  });
});
