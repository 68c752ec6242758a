/**
 * An episode as turns (src/pipeline/app/episode-turns.ts), a stored trajectory's credit from its group
 * and run (trajectories.ts), and Learn's per-turn walkthrough (learn.ts): the numbers are the ones the
 * trainer's buildGrpoBatch puts on the tokens, and "where it went wrong" is read off the trajectory.
 */
import 'fake-indexeddb/auto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type RunConfig } from '../../src/config/schema.ts';
import type { ChatMessage, Trajectory, TrajectoryStep } from '../../src/contracts.ts';
import { creditConfig, episodeTurns, groupCredits, uncredited } from '../../src/pipeline/app/episode-turns.ts';
import { creditWalkthrough, lessonGroup, lessonRuns, lessonUpdate } from '../../src/pipeline/app/learn.ts';
import { storedCredit, tokenDetail, trajectoryOperations } from '../../src/pipeline/app/trajectories.ts';
import { createRng } from '../../src/rng.ts';
import { toScoredGroup } from '../../src/rollout/scored-group.ts';
import { createRun, openStore, putScoredGroup, putTrajectories, type Store } from '../../src/store/index.ts';
import { tokenAdvantages } from '../../src/train/advantages.ts';
import { buildGrpoBatch } from '../../src/train/grpo-batch.ts';
import { ReplayBuffer } from '../../src/train/replay-buffer.ts';
import { makeTrajectory } from '../store/fixtures.ts';

interface TurnSpec {
  text: string;
  calls?: { tool: string; result: string; error?: string }[];
}

/** A tokenized trajectory whose assistant turns are `turns` (3 tokens each, the tool response 1 token between them). */
function episode(
  id: string,
  group: string,
  score: number | null,
  turns: TurnSpec[],
  over: Partial<Trajectory> = {},
): Trajectory {
  const messages: ChatMessage[] = [{ role: 'user', content: 'What is 6 * 7 + 1?' }];
  const steps: TrajectoryStep[] = [];
  const tokens: number[] = [1, 2];
  const mask: number[] = [0, 0];
  const spans: [number, number][] = [];
  turns.forEach((turn, t) => {
    messages.push({ role: 'assistant', content: turn.text });
    spans.push([tokens.length, tokens.length + 3]);
    tokens.push(10, 11, 12);
    mask.push(1, 1, 1);
    for (const call of turn.calls ?? []) {
      steps.push({
        step_id: steps.length,
        turn: t,
        thought: t === 1 ? 'the error says to use * for multiplication, so retry with it' : 'compute it',
        tool_call: {
          tool_name: call.tool,
          parameters: {},
          result: call.result,
          error: call.error ?? null,
          latency_ms: 1,
        },
        observation: call.error ? `Error: ${call.error}` : call.result,
        timestamp: 0,
      });
      messages.push({ role: 'tool', content: call.result });
      tokens.push(20);
      mask.push(0);
    }
  });
  return makeTrajectory({
    id,
    group_id: group,
    run_id: 'run-credit',
    judge_score: score,
    success: score === null ? null : score >= 1,
    steps,
    messages,
    tokens,
    assistant_mask: mask,
    logprobs: mask.map((m) => (m ? -1 : 0)),
    turn_spans: spans,
    final_response: turns.at(-1)!.calls ? null : turns.at(-1)!.text,
    ...over,
  });
}

const failed = { tool: 'calc', result: '', error: 'unexpected character "x": multiply with *' };
const chain = (id: string, group: string, score: number | null) =>
  episode(id, group, score, [
    { text: 'call 6 x 7', calls: [failed] },
    { text: 'call 6 * 7', calls: [{ tool: 'calc', result: '42' }] },
    { text: 'call 42 + 1', calls: [{ tool: 'calc', result: '43' }] },
    { text: '43' },
  ]);
const stopsEarly = (id: string, group: string, score: number | null) =>
  episode(id, group, score, [
    { text: 'call 6 * 7', calls: [{ tool: 'calc', result: '42' }] },
    { text: 'The answer is 42.' },
  ]);

function withCredit(
  over: {
    gamma?: number;
    apply_to?: 'score' | 'turn';
    enabled?: boolean;
    advantage?: 'zscore' | 'mean';
    reward_scale?: number;
  } = {},
): RunConfig {
  return {
    ...DEFAULT_CONFIG,
    grpo: { ...DEFAULT_CONFIG.grpo, gamma: over.gamma ?? 0.9, advantage: over.advantage ?? 'zscore' },
    training: { ...DEFAULT_CONFIG.training, reward_scale: over.reward_scale ?? 1 },
    process_rewards: {
      ...DEFAULT_CONFIG.process_rewards,
      enabled: over.enabled ?? false,
      apply_to: over.apply_to ?? 'score',
    },
  };
}

describe('groupCredits', () => {
  const configs: [string, RunConfig][] = [
    ['discounted outcome', withCredit()],
    ['process rewards per turn', withCredit({ enabled: true, apply_to: 'turn' })],
    [
      'process rewards in the score, mean-only, scaled',
      withCredit({ enabled: true, apply_to: 'score', advantage: 'mean', reward_scale: 2.5 }),
    ],
  ];
  for (const [name, config] of configs) {
    it(`puts on each token exactly what the trainer's batch does (${name}); an unscored sample leaves the group`, () => {
      const group = [chain('a', 'g', 1), stopsEarly('b', 'g', 0.2), chain('c', 'g', 0.6), stopsEarly('d', 'g', null)];
      const batch = buildGrpoBatch({
        groups: [group],
        replay: new ReplayBuffer({ capacity: 4, admit_threshold: 0 }),
        replayCount: 0,
        rng: createRng(1),
        config,
      });
      const credits = groupCredits(group, config);
      expect(credits.map((c) => c.status)).toEqual(['trained', 'trained', 'trained', 'unscored']);
      expect(batch.samples).toHaveLength(3);
      credits.slice(0, 3).forEach((c, i) => {
        expect(c.credits).toHaveLength(group[i].turn_spans.length);
        expect(Array.from(tokenAdvantages(group[i], c.credits!))).toEqual(Array.from(batch.samples[i].advantages!));
      });
    });
  }

  it("paints a failed episode below its group's average red, not its raw score green", () => {
    const group = [
      stopsEarly('w1', 'g', 1),
      stopsEarly('w2', 'g', 1),
      stopsEarly('w3', 'g', 1),
      stopsEarly('lost', 'g', 0.2),
    ];
    const lost = groupCredits(group, creditConfig())[3];
    expect(lost.group?.mean).toBeCloseTo(0.8);
    expect(lost.advantage).toBeCloseTo(-1.5);
    expect(lost.credits!.every((c) => c < 0)).toBe(true);
    const values = tokenDetail(group[3], lost)!
      .pieces.map((p) => p.value)
      .filter((v) => v !== null);
    expect(values.every((v) => v! < 0)).toBe(true);
  });

  it('gives a flat group 0 on every turn (the trainer skips it) and says so', () => {
    const credits = groupCredits([chain('x', 'g', 1), chain('y', 'g', 1)], creditConfig());
    expect(credits.map((c) => [c.status, c.credits])).toEqual([
      ['flat', [0, 0, 0, 0]],
      ['flat', [0, 0, 0, 0]],
    ]);
  });
});

describe('episodeTurns', () => {
  it('shows each turn with its call, observation and credit; a failed call retried successfully is marked recovered', () => {
    const config = withCredit({ gamma: 0.5 });
    const group = [chain('a', 'g', 1), stopsEarly('b', 'g', 0)];
    const credit = groupCredits(group, config)[0];
    const view = episodeTurns(group[0], credit);
    expect(view.turns.map((t) => [t.text, t.steps.length])).toEqual([
      ['call 6 x 7', 1],
      ['call 6 * 7', 1],
      ['call 42 + 1', 1],
      ['43', 0],
    ]);
    const a = credit.advantage!;
    expect(view.turns.map((t) => t.credit)).toEqual(
      [a * 0.125, a * 0.25, a * 0.5, a].map((x) => expect.closeTo(x, 12)),
    );
    expect(view.turns.flatMap((t) => t.marks.map((m) => [m.turn, m.kind]))).toEqual([
      [0, 'failed_call'],
      [1, 'recovered'],
    ]);
    expect(view.turns[0].marks[0].detail).toBe('calc: unexpected character "x": multiply with *');
    expect(view.wrongTurn).toBeNull();
  });

  it('marks the turn after which it answered with an intermediate value, and the answer that does not match', () => {
    const t = episode('i', 'g', 0, [
      { text: 'call 6 x 7', calls: [failed] },
      { text: 'call 6 * 7', calls: [{ tool: 'calc', result: '42' }] },
      { text: 'The answer is 42.' },
    ]);
    const view = episodeTurns(t, uncredited('not_trained'));
    expect(view.turns.flatMap((x) => x.marks.map((m) => [m.turn, m.kind, m.detail]))).toEqual([
      [0, 'failed_call', 'calc: unexpected character "x": multiply with *'],
      [1, 'recovered', 'calc'],
      [1, 'intermediate_answer', '42'],
      [2, 'wrong_answer', 'The answer is 42.'],
    ]);
    expect(view.wrongTurn).toBe(1);
    expect(view.turns.every((x) => x.credit === null)).toBe(true);
  });

  it('puts the blame on an unrecovered failed call, and on the last turn when it stopped without an answer', () => {
    const gaveUp = episode('g', 'g', 0, [{ text: 'call 6 x 7', calls: [failed] }, { text: 'about 50' }]);
    expect(episodeTurns(gaveUp, uncredited('not_trained')).wrongTurn).toBe(0);
    const ranOut = episode(
      'r',
      'g',
      0,
      [
        { text: 'call', calls: [{ tool: 'calc', result: '42' }] },
        { text: 'call', calls: [{ tool: 'calc', result: '43' }] },
      ],
      { finish_reason: 'max_steps' },
    );
    const view = episodeTurns(ranOut, uncredited('not_trained'));
    expect(view.turns[1].marks).toEqual([{ kind: 'no_answer', turn: 1, detail: 'max_steps' }]);
    expect(view.wrongTurn).toBe(1);
    // A right answer that repeats the last observation is no "intermediate value".
    expect(
      episodeTurns(chain('ok', 'g', 1), uncredited('not_trained')).turns.flatMap((x) => x.marks.map((m) => m.kind)),
    ).toEqual(['failed_call', 'recovered']);
  });
});

describe("a stored trajectory's credit", () => {
  let store: Store;
  beforeAll(async () => {
    store = await openStore({ factory: new IDBFactory() });
  });
  afterAll(() => store.db.close());

  it("comes from its stored group and its run's config; without a trained group it says so", async () => {
    const config = withCredit({ gamma: 0.8, enabled: true, apply_to: 'turn' });
    await createRun(store, config, { id: 'run-credit' });
    const group = [chain('s1', 'gs', 1), stopsEarly('s2', 'gs', 0.2), chain('s3', 'gs', 0.5)];
    await putTrajectories(store, group);
    const ops = trajectoryOperations(async () => store);
    expect((await ops.detail(group[0])).turns.credit.status).toBe('not_trained');
    await putScoredGroup(store, {
      group_id: 'gs',
      run_id: 'run-credit',
      step: 3,
      env: 'arith_tool',
      task_id: group[0].task_id,
      scored: toScoredGroup(group),
      trajectory_ids: group.map((t) => t.id),
    });
    const expected = groupCredits(group, config);
    for (const [i, t] of group.entries()) {
      const detail = await ops.detail(t);
      expect(detail.turns.turns.map((x) => x.credit)).toEqual(expected[i].credits);
      // Its group, every sample in the group's order with the credits the update gave it: the group table's rows.
      expect(detail.group.map((m) => m.trajectory.id)).toEqual(['s1', 's2', 's3']);
      expect(detail.group.map((m) => m.turns.turns.map((x) => x.credit))).toEqual(expected.map((c) => c.credits));
      expect(detail.group.map((m) => m.turns.credit.advantage)).toEqual(expected.map((c) => c.advantage));
      expect(detail.tokens?.label).toBe('advantage');
      expect(detail.tokens?.pieces.map((p) => p.value)).toEqual(
        Array.from(tokenAdvantages(t, expected[i].credits!)).map((v, k) => (t.assistant_mask[k] ? v : null)),
      );
    }
    expect(await storedCredit(store, { ...group[0], split: 'test' })).toMatchObject({
      status: 'held_out',
      credits: null,
    });
  });

  it('walks Learn through one multi-turn sample: mean/std → advantage → γ^d per turn → + process reward → its credit', async () => {
    const runs = await lessonRuns(store);
    expect(runs.map((r) => [r.id, r.steps])).toEqual([['run-credit', [3]]]);
    const update = await lessonUpdate(store, 'run-credit', 3);
    expect(update?.groups.map((g) => g.trajectories.map((t) => t.id))).toEqual([['s1', 's2', 's3']]);
    const lesson = { groups: update!.groups.map((g) => lessonGroup(g.trajectories, update!.config)) };
    const w = lesson.groups[0].credit!;
    expect(w.sample).toBe(0); // a 4-turn chain; the other chain has the same turns but a smaller |A|
    expect(w.per_turn_process).toBe(true);
    expect(w.turns.map((t) => t.summary)).toEqual(['calc (failed)', 'calc', 'calc', 'answer']);
    expect(w.turns.map((t) => t.distance)).toEqual([3, 2, 1, 0]);
    for (const t of w.turns) {
      expect(t.outcome).toBeCloseTo(0.8 ** t.distance * w.advantage, 12);
      expect(t.outcome + t.process).toBeCloseTo(t.credit, 12);
    }
    // The failed call earned no tool bonus; the working calls earned theirs (the retry's long thought too).
    expect(w.turns.map((t) => t.bonus)).toEqual([0, 0.05 + 0.02, 0.05, 0]);
    const stored = await storedCredit(store, (await trajectoryOperations(async () => store).get('s1'))!);
    expect(w.turns.map((t) => t.credit)).toEqual(stored.credits);
    // The lesson's tokens are the same credits.
    expect(lesson.groups[0].samples[0].tokens?.filter((p) => p.value !== null).map((p) => p.value)).toEqual(
      stored.credits!.flatMap((c) => [c, c, c]).map((c) => Math.fround(c)),
    );
  });

  it('has no walkthrough for a group nobody was credited in', () => {
    expect(creditWalkthrough([chain('u', 'g', null)], [uncredited('unscored')], creditConfig())).toBeNull();
  });
});
