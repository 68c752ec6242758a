/**
 * The screens' operations (src/pipeline/app) over a fake IndexedDB: what the app's sources are. The
 * Playground's engine is a fake here (its episodes in rollout workers are tests/pipeline/engine.test.ts).
 */
import 'fake-indexeddb/auto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import type { Trajectory } from '../../src/contracts.ts';
import { PLAYGROUND_RUN, playgroundOperations, type PlaygroundEngine } from '../../src/pipeline/app/playground.ts';
import { trainOperations } from '../../src/pipeline/app/train.ts';
import { trajectoryOperations } from '../../src/pipeline/app/trajectories.ts';
import { EMPTY_FILTER } from '../../src/pipeline/app/trajectory-filter.ts';
import type { PlayRequest } from '../../src/pipeline/engine/engine-api.ts';
import {
  createRun,
  getRun,
  getTrajectory,
  openStore,
  putTrajectory,
  setRunStatus,
  type Store,
} from '../../src/store/index.ts';
import { makeTrajectory } from '../store/fixtures.ts';
import { REMOTE_JUDGES_SETTING } from '../../src/pipeline/operations/judge-settings.ts';
import { setSetting } from '../../src/store/index.ts';
import { useChatServer } from '../judge/chat-server.ts';

const chat = useChatServer();

let store: Store;
const getStore = async () => store;
beforeAll(async () => {
  store = await openStore({ factory: new IDBFactory() });
});
afterAll(() => store.db.close());

describe('trajectory operations', () => {
  it('pages with store filters, and scans for search and judge disagreement', async () => {
    await createRun(store, DEFAULT_CONFIG, { id: 'run-t' });
    const plain = makeTrajectory({ run_id: 'run-t', task_description: 'What is 1 + 1?' });
    const split = makeTrajectory({
      run_id: 'run-t',
      task_description: 'What is 5 + 5?',
      votes: [
        { judge_id: 'a', score: 0, rationale: '', latency_ms: 1 },
        { judge_id: 'b', score: 1, rationale: '', latency_ms: 1 },
      ],
    });
    for (const t of [plain, split]) await putTrajectory(store, t);
    const ops = trajectoryOperations(getStore);
    const inRun = { ...EMPTY_FILTER, runId: 'run-t' };
    expect(await ops.count(inRun)).toBe(2);
    expect((await ops.page(inRun, 0, 10)).map((r) => r.id).sort()).toEqual([plain.id, split.id].sort());
    expect(await ops.count({ ...inRun, search: '5 + 5' })).toBe(1);
    expect((await ops.page({ ...inRun, minDisagreement: 0.5 }, 0, 10)).map((r) => [r.id, r.disagreement])).toEqual([
      [split.id, 1],
    ]);
    expect((await ops.facets()).runs.map((r) => r.id)).toContain('run-t');
    // Never trained: its tokens are shown uncoloured on policy tokens, null elsewhere; its turns have no credit.
    const { tokens: detail, turns } = await ops.detail(plain);
    expect(detail?.label).toBe('not trained yet');
    expect(detail?.pieces.map((p) => p.value)).toEqual(plain.assistant_mask.map((m) => (m ? 0 : null)));
    expect(turns.credit.status).toBe('not_trained');
    expect(turns.turns.map((t) => t.credit)).toEqual([null, null]);
  });
});

describe('playground operations', () => {
  function fakeEngine(result: (request: PlayRequest) => Trajectory) {
    const requests: PlayRequest[] = [];
    const engine: PlaygroundEngine = {
      policyStatus: () => ({ unavailable: null, label: 'the shipped base model', name: 'spindle-base' }),
      async playEpisode(request, onEvent) {
        requests.push(request);
        onEvent({ type: 'text', turn: 0, piece: 'hi' } as Parameters<typeof onEvent>[0]);
        return result(request);
      },
      cancelEpisode: () => {},
    };
    return { engine, requests };
  }

  it('sends the expert to the engine, saves the episode under the playground run, then saves it judged', async () => {
    const fake = fakeEngine((request) =>
      makeTrajectory({
        id: request.episodeId,
        env: 'arith_tool',
        task_id: request.task.id,
        run_id: PLAYGROUND_RUN,
        judge_score: null,
        votes: [],
        success: null,
      }),
    );
    const ops = playgroundOperations(getStore, () => fake.engine);
    const [task] = await ops.tasks('arith_tool', 1, 1);
    expect(task.id.startsWith('arith_tool/')).toBe(true);
    expect((await ops.policies()).map((p) => [p.id, p.unavailable])).toEqual([
      ['local', null],
      ['expert', null],
    ]);
    // The option says the policy's short name; the model line under the select says the rest.
    expect((await ops.policies())[0]).toMatchObject({
      label: 'Local model (spindle-base)',
      model: 'the shipped base model',
    });
    const pieces: string[] = [];
    const trajectory = await ops.runEpisode(
      { task, seed: 4, policy: 'expert' },
      (e) => {
        if (e.type === 'text') pieces.push(e.piece);
      },
      new AbortController().signal,
    );
    expect(fake.requests[0]).toMatchObject({ policy: 'expert', seed: 4, runId: PLAYGROUND_RUN, task: { id: task.id } });
    expect(pieces).toEqual(['hi']);
    expect(await getTrajectory(store, trajectory.id)).toMatchObject({ judge_score: null });
    const [result] = await ops.judge([trajectory], new AbortController().signal);
    // The judges' votes, then the environment's own verdict (env:NAME), which gates their score.
    expect(result.votes.map((v) => v.judge_id)).toEqual([
      ...DEFAULT_CONFIG.judge.judges.map((j) => j.id),
      'env:arith_tool',
    ]);
    expect(await getTrajectory(store, trajectory.id)).toMatchObject({ judge_score: result.score, votes: result.votes });
  });

  it('judges a sampled group as a run does: a group judge switched on in the Judges screen scores all of it in one call', async () => {
    await setSetting(store, REMOTE_JUDGES_SETTING, [
      { id: 'ruler', base_url: chat.baseUrl, model: 'group-model', enabled: true, kind: 'group', rubric: '' },
    ]);
    try {
      chat.queue.push({ kind: 'ok', content: 'The first is right.\nVERDICT: {"1": 0.9, "2": 0.2, "3": 0.1}' });
      const fake = fakeEngine((request) =>
        makeTrajectory({
          id: request.episodeId,
          env: 'arith_tool',
          task_id: request.task.id,
          seed: request.seed,
          run_id: PLAYGROUND_RUN,
          judge_score: null,
          votes: [],
          success: null,
        }),
      );
      const ops = playgroundOperations(getStore, () => fake.engine);
      const [task] = await ops.tasks('arith_tool', 1, 1);
      const signal = new AbortController().signal;
      const group = [];
      for (const seed of [1, 2, 3])
        group.push(await ops.runEpisode({ task, seed, policy: 'expert' }, () => {}, signal));
      const results = await ops.judge(group, signal);
      expect(chat.received).toHaveLength(1);
      expect(results.map((r) => r.votes.find((v) => v.judge_id === 'ruler')?.score)).toEqual([0.9, 0.2, 0.1]);
      for (const [i, t] of group.entries())
        expect(await getTrajectory(store, t.id)).toMatchObject({
          votes: results[i].votes,
          judge_score: results[i].score,
        });
    } finally {
      await setSetting(store, REMOTE_JUDGES_SETTING, []);
    }
  });

  it('refuses the expert on a typed task and a policy it does not have, before asking the engine', async () => {
    const fake = fakeEngine(() => {
      throw new Error('not reached');
    });
    const ops = playgroundOperations(getStore, () => fake.engine);
    const typed = await ops.customTask('arith_tool', 1, 'What is 2 + 2?');
    const signal = new AbortController().signal;
    await expect(ops.runEpisode({ task: typed, seed: 1, policy: 'expert' }, () => {}, signal)).rejects.toThrow(
      /only knows generated tasks/,
    );
    await expect(ops.runEpisode({ task: typed, seed: 1, policy: 'remote' }, () => {}, signal)).rejects.toThrow(
      /not available/,
    );
    expect(fake.requests).toEqual([]);
  });
});

describe('playground cancellation', () => {
  it('asks the engine to cancel the episode it started when the signal fires, and rejects as aborted', async () => {
    const cancelled: string[] = [];
    let rejectPlay: (error: Error) => void = () => {};
    const engine: PlaygroundEngine = {
      policyStatus: () => ({ unavailable: null, label: 'x', name: 'x' }),
      playEpisode: () =>
        new Promise((_, reject) => {
          rejectPlay = reject;
        }),
      cancelEpisode(id) {
        cancelled.push(id);
        rejectPlay(new Error('worker terminated'));
      },
    };
    const ops = playgroundOperations(getStore, () => engine);
    const [task] = await ops.tasks('arith_tool', 1, 1);
    const controller = new AbortController();
    const running = ops.runEpisode({ task, seed: 1, policy: 'local' }, () => {}, controller.signal);
    await Promise.resolve();
    controller.abort();
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    expect(cancelled).toHaveLength(1);
    expect(cancelled[0]).toMatch(/^play-/);
  });
});

describe('train operations', () => {
  it('offers unfinished runs for resuming, never the playground run, with their latest checkpoint step', async () => {
    await createRun(store, { ...DEFAULT_CONFIG, name: 'left' }, { id: 'run-left' });
    await setRunStatus(store, 'run-left', 'paused');
    await createRun(store, DEFAULT_CONFIG, { id: 'run-done' });
    await setRunStatus(store, 'run-done', 'completed');
    if (!(await getRun(store, PLAYGROUND_RUN))) await createRun(store, DEFAULT_CONFIG, { id: PLAYGROUND_RUN });
    await setRunStatus(store, PLAYGROUND_RUN, 'running');
    const offered = await trainOperations(getStore).interruptedRuns();
    expect(offered.map((r) => [r.id, r.status, r.checkpointStep])).toEqual([['run-left', 'paused', null]]);
  });
});
