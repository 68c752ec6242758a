import 'fake-indexeddb/auto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunConfig } from '../../src/config/schema.ts';
import { validateRunConfig } from '../../src/config/validate.ts';
import type { Trajectory } from '../../src/contracts.ts';
import { getEnvironment } from '../../src/envs/registry.ts';
import { initBackend, type BackendChoice } from '../../src/kernels/backend.ts';
import { loadHfModel } from '../../src/hub/hf.ts';
import { Engine } from '../../src/pipeline/engine/browser-engine.ts';
import type { EngineDeps, PlayEvent } from '../../src/pipeline/engine/engine-api.ts';
import type { RunEvent } from '../../src/pipeline/operations/events.ts';
import { spawnNodeRolloutWorker } from '../../src/pipeline/platform/node.ts';
import { readSecrets, secretLookup } from '../../src/pipeline/engine/secrets.ts';
import { getRun, listMetrics, openStore, setSetting, TrajectoryCommons, type Store } from '../../src/store/index.ts';
import { writeTinyModel } from './tiny-model.ts';

let modelDir: string;
let store: Store;

beforeAll(async () => {
  await initBackend({ forced: 'wasm' });
  modelDir = await writeTinyModel(9, 'spindle-engine-model-');
  store = await openStore({ factory: new IDBFactory() });
});
afterAll(() => store.db.close());

function config(maxSteps: number): RunConfig {
  const { config: c, errors } = validateRunConfig({
    name: 'engine-test',
    model: { base_model: modelDir },
    lora: { r: 2, alpha: 4, target_modules: ['q_proj', 'v_proj'] },
    training: { max_steps: maxSteps, batch_size: 1, group_size: 2, checkpoint_every: 1, eval_interval: 50 },
    sampling: { max_new_tokens: 8 },
    safety: { enabled: false },
    trajectory_collection: { n_workers: 2, max_steps_per_trajectory: 1 },
    tasks: { environments: ['arith_tool'], eval_items: 1 },
  });
  if (!c) throw new Error(JSON.stringify(errors));
  return c;
}

const wasmChoice = (reason: string): BackendChoice => ({
  backend: 'wasm',
  reason,
  threads: false,
  simd: true,
  adapter: null,
  forced: true,
});

function makeEngine(over: Partial<EngineDeps> = {}): Engine {
  return new Engine({
    initBackend: () => initBackend({ forced: 'wasm' }),
    deviceLost: () => null,
    openStore: async () => store,
    loadModel: async (base) => loadHfModel(base),
    baseModelMissing: () => 'no shipped model in this test',
    spawnWorker: (index, generator) => spawnNodeRolloutWorker(index, generator),
    cores: 2,
    ...over,
  });
}

/** Resolves with every event up to (and including) the run's final status. */
function untilSettled(engine: Engine): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  return new Promise((resolve) => {
    const id = engine.subscribe((event) => {
      events.push(event);
      if (event.type === 'status' && ['finished', 'stopped', 'error'].includes(event.status)) {
        engine.unsubscribe(id);
        resolve(events);
      }
    });
  });
}

/** The run's training trajectories (held-out evaluation episodes are stored too, under their split). */
async function trajectoriesOf(runId: string): Promise<Trajectory[]> {
  const out: Trajectory[] = [];
  for await (const t of new TrajectoryCommons(store).load({ run_id: runId, split: 'train' })) out.push(t);
  return out;
}

describe('the engine (what the engine web worker exposes)', () => {
  it('runs a training run through its RunController surface, then plays the trained model in the playground', async () => {
    const engine = makeEngine();
    expect((await engine.init({ cores: 2 })).backend).toBe('wasm');
    expect(engine.policyStatus().unavailable).toBe('no shipped model in this test');

    const settled = untilSettled(engine);
    const runId = await engine.start(config(2));
    const events = await settled;
    expect(events.at(-1)).toMatchObject({ type: 'status', status: 'finished', backend: 'wasm' });
    for (const type of ['episode-start', 'trajectory', 'update', 'progress', 'checkpoint'])
      expect(events.map((e) => e.type)).toContain(type);
    expect((await getRun(store, runId))?.status).toBe('completed');
    expect(await trajectoriesOf(runId)).toHaveLength(4);

    const status = engine.policyStatus();
    expect(status.unavailable).toBeNull();
    expect(status.label).toContain('engine-test');
    const task = getEnvironment('arith_tool').generate(5, 1, 'train');
    const pieces: PlayEvent[] = [];
    const trajectory = await engine.playEpisode(
      {
        episodeId: 'e1',
        policy: 'local',
        task,
        seed: 3,
        sampling: { temperature: 1, top_k: 0, top_p: 1, max_new_tokens: 12 },
        maxSteps: 1,
      },
      (e) => pieces.push(e),
    );
    expect(trajectory.model_id).toBe('local');
    expect(trajectory.token_count).toBeGreaterThan(0);
    const streamed = pieces
      .filter((e) => e.type === 'text')
      .map((e) => (e as { piece: string }).piece)
      .join('');
    expect(streamed.length).toBeGreaterThan(0);
  });

  it('cancels a playground episode on request', async () => {
    const engine = makeEngine({ baseModelMissing: () => null, loadModel: async () => loadHfModel(modelDir) });
    const task = getEnvironment('arith_tool').generate(6, 1, 'train');
    const playing = engine.playEpisode(
      {
        episodeId: 'e2',
        policy: 'local',
        task,
        seed: 2,
        sampling: { temperature: 1, top_k: 0, top_p: 1, max_new_tokens: 200 },
      },
      (event) => {
        if (event.type === 'text') engine.cancelEpisode('e2');
      },
    );
    await expect(playing).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('plays the scripted expert in a rollout worker of its own, without loading a model, unjudged', async () => {
    const spawned: number[] = [];
    const engine = makeEngine({
      loadModel: () => Promise.reject(new Error('the expert needs no model')),
      spawnWorker: (index, generator) => {
        spawned.push(index);
        return spawnNodeRolloutWorker(index, generator);
      },
    });
    const task = getEnvironment('arith_tool').generate(7, 1, 'train');
    const events: PlayEvent[] = [];
    const trajectory = await engine.playEpisode({ episodeId: 'x1', policy: 'expert', task, seed: 1 }, (e) =>
      events.push(e),
    );
    expect(spawned).toHaveLength(1);
    expect(trajectory).toMatchObject({ id: 'x1', model_id: 'expert:arith_tool', judge_score: null, votes: [] });
    expect(trajectory.steps.length).toBeGreaterThan(0);
    // Every streamed event arrived before the result: the text pieces spell the expert's turns, and each tool result came as a step.
    const text = events
      .filter((e) => e.type === 'text')
      .map((e) => (e as { piece: string }).piece)
      .join('');
    expect(text).toContain('<tool_call>');
    expect(events.filter((e) => e.type === 'tool_result')).toHaveLength(trajectory.steps.length);
  });

  it('falls back to wasm after a WebGPU device loss, says so, and resumes the run from its checkpoint', async () => {
    let loseDevice!: (reason: string) => void;
    const lost = new Promise<string>((resolve) => (loseDevice = resolve));
    let inits = 0;
    const engine = makeEngine({
      // The first backend pretends to be WebGPU (the tensors really live on wasm); the fallback is wasm.
      initBackend: async (forced) => {
        inits++;
        const real = await initBackend({ forced: 'wasm' });
        return forced === 'wasm'
          ? wasmChoice(real.reason)
          : { ...real, backend: 'webgpu', reason: 'real GPU adapter (test)' };
      },
      deviceLost: () => (inits === 1 ? lost : null),
    });
    const backends: BackendChoice[] = [];
    engine.watchBackend((b) => backends.push(b));
    const events: RunEvent[] = [];
    let finished!: () => void;
    const done = new Promise<void>((resolve) => (finished = resolve));
    engine.subscribe((event) => {
      events.push(event);
      if (event.type === 'update' && event.step === 1) loseDevice('unknown: GPU process crashed');
      if (event.type === 'status' && event.status === 'finished') finished();
      if (event.type === 'error' && event.fatal) finished();
    });

    const runId = await engine.start(config(3));
    await done;
    expect(backends.map((b) => b.backend)).toEqual(['webgpu', 'wasm']);
    expect(backends[1].reason).toContain('WebGPU device lost (unknown: GPU process crashed)');
    const notice = events.find((e) => e.type === 'error');
    expect(notice).toMatchObject({ fatal: false, run_id: runId });
    expect((notice as { message: string }).message).toContain(
      'switching to wasm and resuming the run from its last checkpoint',
    );
    expect(events.some((e) => e.type === 'error' && e.fatal)).toBe(false);
    expect(events.filter((e) => e.type === 'status').at(-1)).toMatchObject({ status: 'finished', backend: 'wasm' });
    expect((await getRun(store, runId))?.status).toBe('completed');
    expect((await listMetrics(store, runId)).map((m) => m.step).at(-1)).toBe(3);
    // Re-rolled groups keep their ids: 3 updates × 1 group × 2 samples, none duplicated.
    const trajectories = await trajectoriesOf(runId);
    expect(new Set(trajectories.map((t) => t.id)).size).toBe(trajectories.length);
    expect(trajectories).toHaveLength(6);
  });

  it('hands the judges\u2019 saved keys to rollout workers by setting name or judge name', async () => {
    await setSetting(store, 'secret.my-judge', 'sk-test');
    await setSetting(store, 'judges.in_browser', true);
    const secrets = await readSecrets(store);
    expect(secrets).toEqual({ 'secret.my-judge': 'sk-test' });
    const lookup = secretLookup(secrets);
    expect(lookup('secret.my-judge')).toBe('sk-test');
    expect(lookup('my-judge')).toBe('sk-test');
    expect(lookup('other')).toBeNull();
  });
});
