/** PlaygroundState and LiveEpisode over a fake PlaygroundSource: what the Playground screen does with each answer. */
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import { describe, expect, it } from 'vitest';
import type { Task, Trajectory } from '../../src/contracts.ts';
import { LiveEpisode } from '../../src/ui/screens/playground/live-episode.svelte.ts';
import { PlaygroundState } from '../../src/ui/screens/playground/playground.svelte.ts';
import type { EpisodeRequest, PlaygroundSource } from '../../src/ui/screens/playground/source.ts';
import { makeTrajectory } from '../store/fixtures.ts';

const task = (id: string, difficulty = 2): Task => ({
  id,
  env: 'arith_tool',
  split: 'train',
  difficulty,
  seed: 0,
  prompt: `task ${id}`,
  data: { a: 1 },
});

/** A source whose episodes stream one text piece and one step, scoring each seed by `scoreOf`. */
function fakeSource(over: Partial<PlaygroundSource> = {}, scoreOf: (seed: number) => number = () => 1) {
  const requests: EpisodeRequest[] = [];
  const source: PlaygroundSource = {
    environments: async () => [
      { id: 'arith_tool', title: 'arith tool', description: '', levels: [2, 3] },
      { id: 'letter_count', title: 'letter count', description: '', levels: [1] },
    ],
    policies: async () => [
      { id: 'local', label: 'Local model', unavailable: 'no model' },
      { id: 'expert', label: 'Scripted expert', unavailable: null },
    ],
    tasks: async (_env, difficulty, count) => Array.from({ length: count }, (_, i) => task(`t${i}`, difficulty)),
    customTask: async (env, difficulty, prompt) => ({ ...task('custom', difficulty), env, prompt, data: {} }),
    async runEpisode(request, onEvent) {
      requests.push(request);
      const trajectory = makeTrajectory({ task_id: request.task.id, seed: request.seed });
      onEvent({ type: 'text', piece: 'thinking' });
      onEvent({ type: 'step', step: trajectory.steps[0] });
      return trajectory;
    },
    judge: async (group: Trajectory[]) =>
      group.map((t) => ({
        score: scoreOf(t.seed),
        votes: [{ judge_id: 'rule', score: scoreOf(t.seed), rationale: 'ok', latency_ms: 1 }],
      })),
    ...over,
  };
  return { source, requests };
}

describe('PlaygroundState', () => {
  it('loads the first available policy, the first environment at one of its levels, and its tasks', async () => {
    const state = new PlaygroundState(fakeSource().source);
    state.difficulty = 1;
    await state.load();
    expect(state.policy).toBe('expert');
    expect(state.envId).toBe('arith_tool');
    expect(state.difficulty).toBe(2);
    expect(state.tasks).toHaveLength(6);
    expect(state.task?.id).toBe('t0');
  });

  it('runs the picked task, streams it, judges it; a re-run keeps task and seed', async () => {
    const { source, requests } = fakeSource();
    const state = new PlaygroundState(source);
    await state.load();
    await state.run();
    expect(state.episode).toMatchObject({ phase: 'done', score: 1 });
    expect(state.episode?.votes.map((v) => v.judge_id)).toEqual(['rule']);
    expect(requests[0]).toMatchObject({ policy: 'expert', task: { id: 't0' } });
    const seed = requests[0].seed;
    await state.run(true);
    expect(requests[1]).toMatchObject({ seed, task: { id: 't0' } });
    await state.run();
    expect(requests[2].seed).not.toBe(seed);
  });

  it('says why when there is no task, when the episode fails, and when only the judge fails', async () => {
    let failEpisode = true;
    const { source } = fakeSource({
      judge: async () => {
        throw new Error('judge down');
      },
    });
    const runEpisode = source.runEpisode.bind(source);
    source.runEpisode = async (...args) => {
      if (failEpisode) throw new Error('sandbox died');
      return runEpisode(...args);
    };
    const state = new PlaygroundState(source);
    await state.load();
    state.useCustom = true;
    await state.run();
    expect(state.taskError).toMatch(/Type a task first/);
    expect(state.episode).toBeNull();
    state.useCustom = false;
    await state.run();
    expect(state.episode).toMatchObject({ phase: 'error', error: 'sandbox died' });
    failEpisode = false;
    await state.run();
    expect(state.episode).toMatchObject({ phase: 'done', judgeError: 'judge down', score: null });
  });

  it('samples a group with consecutive seeds and shows its advantages once every member is judged', async () => {
    const { source, requests } = fakeSource({}, (seed) => seed % 2);
    const state = new PlaygroundState(source);
    await state.load();
    state.groupSize = 4;
    await state.sampleGroup();
    const seeds = requests.map((r) => r.seed);
    expect(seeds).toEqual([seeds[0], seeds[0] + 1, seeds[0] + 2, seeds[0] + 3]);
    expect(state.group.every((e) => e.phase === 'done')).toBe(true);
    expect(state.groupStats?.mean).toBeCloseTo(0.5);
    // Scores alternate 0/1 (or 1/0), so advantages alternate in sign.
    const advantages = state.groupStats!.advantages;
    expect(Math.sign(advantages[0])).toBe(-Math.sign(advantages[1]));
    // Each member's turns carry its advantage discounted by the default γ per turn to the end.
    const credits = state.groupCredits!;
    expect(credits.map((c) => c.advantage)).toEqual(advantages);
    const turns = state.group[0].annotated(credits[0])!.turns;
    expect(turns.map((t) => t.credit)).toEqual([
      expect.closeTo(DEFAULT_CONFIG.grpo.gamma * advantages[0], 12),
      expect.closeTo(advantages[0], 12),
    ]);
    // A member judged a failure is marked where it went wrong: the turn whose result it answered with.
    const failed = state.group.findIndex((e) => e.score === 0);
    expect(state.group[failed].annotated(credits[failed])!.turns.flatMap((t) => t.marks.map((m) => m.kind))).toEqual([
      'intermediate_answer',
      'wrong_answer',
    ]);
    expect(state.group[failed].annotated(credits[failed])!.wrongTurn).toBe(0);
    // A single episode has no group: its turns show, without credits.
    await state.run();
    expect(state.episode!.annotated(null)!.turns.map((t) => t.credit)).toEqual([null, null]);
  });

  it('cancels the rest of a group: members not yet started end cancelled, without asking the source, and nothing is judged', async () => {
    const { source, requests } = fakeSource();
    const state = new PlaygroundState(source);
    await state.load();
    const run = source.runEpisode;
    source.runEpisode = async (request, onEvent, signal) => {
      const played = await run(request, onEvent, signal);
      state.cancel();
      return played;
    };
    let judged = 0;
    source.judge = async () => {
      judged++;
      return [];
    };
    state.groupSize = 3;
    await state.sampleGroup();
    expect(requests).toHaveLength(1);
    expect(judged).toBe(0);
    expect(state.group.map((e) => e.phase)).toEqual(['cancelled', 'cancelled', 'cancelled']);
    expect(state.group[0].trajectory).not.toBeNull();
    expect(state.groupStats).toBeNull();
  });

  it('judges a sampled group once, as one group, after its last member', async () => {
    const { source } = fakeSource();
    const state = new PlaygroundState(source);
    await state.load();
    const calls: number[] = [];
    const judge = source.judge;
    source.judge = async (group, signal) => {
      calls.push(group.length);
      return judge(group, signal);
    };
    state.groupSize = 3;
    await state.sampleGroup();
    expect(calls).toEqual([3]);
  });
  it("says the local model loads with the first episode, is loading until that episode's first text, then ready", async () => {
    const phases: string[] = [];
    const { source } = fakeSource({
      policies: async () => [{ id: 'local', label: 'Local model (m)', unavailable: null, model: 'm' }],
      async runEpisode(request, onEvent) {
        phases.push(state.modelText!);
        onEvent({ type: 'text', piece: 'hi' });
        phases.push(state.modelText!);
        return makeTrajectory({ task_id: request.task.id, seed: request.seed });
      },
    });
    const state = new PlaygroundState(source);
    await state.load();
    expect(state.modelText).toBe('m (loads with the first episode)');
    await state.run();
    expect(phases).toEqual(['loading m…', 'm ready']);
    expect(state.modelText).toBe('m ready');
    // Loaded once: the next episode does not say it loads again.
    await state.run();
    expect(phases.slice(2)).toEqual(['m ready', 'm ready']);
  });

  it('says the model did not load when the first episode fails before any text, and names no model for the expert', async () => {
    const { source } = fakeSource({
      policies: async () => [
        { id: 'local', label: 'Local model (m)', unavailable: null, model: 'm' },
        { id: 'expert', label: 'Scripted expert', unavailable: null },
      ],
      runEpisode: async () => {
        throw new Error('no weights');
      },
    });
    const state = new PlaygroundState(source);
    await state.load();
    await state.run();
    expect(state.modelPhase).toBe('failed');
    expect(state.modelText).toBe("m: did not load: see the episode's error");
    state.policy = 'expert';
    expect(state.modelText).toBeNull();
  });
});

describe('LiveEpisode', () => {
  it('starts a new turn when text follows tool steps, and takes the stored trajectory as the truth when it finishes', () => {
    const trajectory = makeTrajectory();
    const episode = new LiveEpisode(task('x'), 1);
    episode.onEvent({ type: 'text', piece: 'a' });
    episode.onEvent({ type: 'text', piece: 'b' });
    episode.onEvent({ type: 'step', step: { ...trajectory.steps[0], turn: 0 } });
    episode.onEvent({ type: 'text', piece: 'c' });
    expect(episode.turns.map((t) => [t.text, t.steps.length])).toEqual([
      ['ab', 1],
      ['c', 0],
    ]);
    expect(episode.streaming).toBe(true);
    episode.finish(trajectory);
    expect(episode.phase).toBe('judging');
    expect(episode.streaming).toBe(false);
    expect(episode.turns[0].text).toBe(trajectory.messages.find((m) => m.role === 'assistant')?.content);
  });
});
