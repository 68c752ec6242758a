/** TrainState over a fake RunController and TrainSource: config editing, judges from the Judges screen's switches, run control, events, resume. */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type RunConfig } from '../../src/config/schema.ts';
import { DEFAULT_PRESET } from '../../src/config/presets.ts';
import type { JudgeSwitches } from '../../src/pipeline/operations/judge-settings.ts';
import type { RunController, RunEvent, RunListener } from '../../src/pipeline/operations/events.ts';
import { TrainState, type InterruptedRun, type TrainSource } from '../../src/ui/screens/train/train.svelte.ts';

function fakeController() {
  const listeners = new Set<RunListener>();
  const started: { config: RunConfig; resumeRunId?: string }[] = [];
  const calls: string[] = [];
  let refuse: string | null = null;
  const controller: RunController = {
    async start(config, options) {
      if (refuse) throw new Error(refuse);
      started.push({ config, resumeRunId: options?.resumeRunId });
      return options?.resumeRunId ?? 'run-1';
    },
    pause: async () => void calls.push('pause'),
    resume: async () => void calls.push('resume'),
    stop: async () => void calls.push('stop'),
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  const emit = (event: RunEvent) => {
    for (const l of listeners) l(event);
  };
  return {
    controller,
    started,
    calls,
    emit,
    listeners,
    refuseWith: (message: string | null) => {
      refuse = message;
    },
  };
}

const noSwitches: JudgeSwitches = { inBrowser: false, remotes: [] };

let state: TrainState | null = null;
afterEach(() => state?.dispose());

function makeState(over: Partial<TrainSource> = {}) {
  const fake = fakeController();
  state = new TrainState({
    controller: fake.controller,
    environments: async () => ['arith_tool', 'func_trace', 'letter_count'],
    judgeSwitches: async () => noSwitches,
    ...over,
  });
  return { state, ...fake };
}

describe('TrainState', () => {
  it('offers an imported model as a base without putting it in the config; choosing it writes model.base_model', async () => {
    const { state, started } = makeState({ importedBase: async () => 'imported:tiny-test' });
    await state.load();
    expect(state.importedBase).toBe('imported:tiny-test');
    const configured = state.shown.model.base_model;
    expect(configured).not.toBe('imported:tiny-test');
    await state.start();
    expect(started.at(-1)!.config.model.base_model).toBe(configured);
    state.setField('model.base_model', state.importedBase);
    expect(state.shown.model.base_model).toBe('imported:tiny-test');
  });

  it('offers only the presets a run does: SFT and transfer are CLI workflows', () => {
    const { state } = makeState();
    const names = state.presets.map((p) => p.name);
    expect(names).toContain('watch-it-learn');
    expect(names).not.toContain('sft');
    expect(names).not.toContain('transfer');
  });

  it('edits the config through the YAML, keeps the last good config while the YAML is broken, and names a bad field', async () => {
    const { state } = makeState();
    await state.load();
    state.setField('training.group_size', 6);
    expect(state.config?.training.group_size).toBe(6);
    expect(state.yamlText).toMatch(/group_size: 6/);
    state.setYaml('training: [');
    expect(state.config).toBeNull();
    expect(state.canStart).toBe(false);
    expect(state.shown.training.group_size).toBe(6);
    state.resetToDefaults();
    state.setField('tasks.environments', ['no_such_env']);
    expect(state.fieldError('tasks.environments')).toMatch(/no_such_env/);
  });

  it('writes the judges switched on in the Judges screen into the config, and takes them out when switched off', async () => {
    let switches: JudgeSwitches = {
      inBrowser: true,
      remotes: [{ id: 'gpt', base_url: 'https://x/v1', model: 'm', enabled: true, hasKey: false }],
    };
    const { state } = makeState({ judgeSwitches: async () => switches });
    await state.load();
    expect(state.config?.judge.judges.map((j) => j.id)).toEqual([
      ...DEFAULT_CONFIG.judge.judges.map((j) => j.id),
      'onnx-judge',
      'gpt',
    ]);
    expect(state.yamlText).toMatch(/onnx-judge/);
    switches = { inBrowser: false, remotes: [{ ...switches.remotes[0], enabled: false }] };
    await state.syncJudges();
    expect(state.config?.judge.judges.map((j) => j.id)).toEqual(DEFAULT_CONFIG.judge.judges.map((j) => j.id));
  });

  it('an edit made while the switches are read is kept: a sync that began before it changes nothing', async () => {
    let hold = false;
    let release!: (s: JudgeSwitches) => void;
    const { state } = makeState({
      judgeSwitches: () =>
        hold
          ? new Promise<JudgeSwitches>((resolve) => {
              release = resolve;
            })
          : Promise.resolve(noSwitches),
    });
    await state.load();
    hold = true;
    const sync = state.syncJudges();
    const edited = state.yamlText.replace(
      'judges:',
      'judges:\n    - type: model\n      id: onnx-judge\n      path: models/judge',
    );
    state.setYaml(edited);
    release(noSwitches);
    await sync;
    expect(state.yamlText).toBe(edited);
    expect(state.config?.judge.judges.map((j) => j.id)).toContain('onnx-judge');
  });

  it('a config typed before the first sync is kept as written; switches changed later are brought in', async () => {
    let switches: JudgeSwitches = noSwitches;
    const { state: typedFirst } = makeState({ judgeSwitches: async () => switches });
    const typed = typedFirst.yamlText.replace(
      'judges:',
      'judges:\n    - type: model\n      id: onnx-judge\n      path: models/judge',
    );
    typedFirst.setYaml(typed);
    await typedFirst.load(); // its first sync comes after the user's text
    expect(typedFirst.yamlText).toBe(typed);
    await typedFirst.syncJudges(); // a later visit with the same switches changes nothing
    expect(typedFirst.config?.judge.judges.map((j) => j.id)).toContain('onnx-judge');
    switches = {
      inBrowser: false,
      remotes: [{ id: 'gpt', base_url: 'https://x/v1', model: 'm', enabled: true, hasKey: false }],
    };
    await typedFirst.syncJudges(); // changed switches: the config agrees with all of them again
    expect(typedFirst.config?.judge.judges.map((j) => j.id)).toEqual(['rule', 'gpt']);
  });

  it('a preset changes only the settings it names: the judges switched on, the base model and other edits stay', async () => {
    const switches: JudgeSwitches = {
      inBrowser: true,
      remotes: [{ id: 'gpt', base_url: 'https://x/v1', model: 'm', enabled: true, hasKey: false }],
    };
    const { state, started } = makeState({
      judgeSwitches: async () => switches,
      environments: async () => ['arith_tool', 'letter_count', 'order_total', 'func_trace'],
    });
    await state.load();
    const judges = state.config!.judge.judges;
    expect(judges.map((j) => j.id)).toContain('gpt');
    state.setField('model.base_model', 'hf:test-org/tiny');
    state.setField('sampling.temperature', 0.7);
    state.setField('training.reward_scale', 2.5);
    state.setYaml(`# my run\n${state.yamlText}`);
    const before = state.config!;

    // The screen opens on the default preset (chain-calls); another one replaces what it names.
    expect(before.name).toBe(DEFAULT_PRESET);
    state.applyPreset('watch-it-learn');
    const after = state.config!;
    expect(after.judge).toEqual(before.judge);
    expect(after.judge.judges).toEqual(judges);
    expect(after.model.base_model).toBe('hf:test-org/tiny');
    expect(after.sampling.temperature).toBe(0.7);
    expect(state.yamlText.startsWith('# my run\n')).toBe(true);
    // What the preset names, it sets.
    expect(after).toMatchObject({
      name: 'watch-it-learn',
      training: { max_steps: 40, group_size: 8, learning_rate: 5e-4 },
      tasks: { environments: ['arith_tool'], difficulty_range: [3, 3], eval_items: 32 },
    });
    // Everything it does not name is as it was.
    const {
      name: _n,
      training: _t,
      curriculum: _c,
      safety: _s,
      trajectory_collection: _tc,
      tasks: _k,
      ...rest
    } = after;
    const {
      name: _n0,
      training: _t0,
      curriculum: _c0,
      safety: _s0,
      trajectory_collection: _tc0,
      tasks: _k0,
      ...restBefore
    } = before;
    expect(rest).toEqual(restBefore);
    expect(after.training.reward_scale).toBe(2.5);
    await state.start();
    expect(started[0].config.judge.judges).toEqual(judges);
  });

  it('a preset on a broken YAML applies to the last good config; one that cannot apply says why', async () => {
    const { state } = makeState();
    await state.load();
    state.setField('sampling.temperature', 0.7);
    state.setYaml('training: [');
    state.applyPreset('watch-it-learn');
    expect(state.config).toMatchObject({ name: 'watch-it-learn', sampling: { temperature: 0.7 } });
    // A known-environments list without arith_tool (say, the engine lost it) refuses the preset by name, leaving the YAML as it was.
    state.knownEnvironments = ['letter_count'];
    const yaml = state.yamlText;
    state.applyPreset('demo');
    expect(state.yamlText).toBe(yaml);
    expect(state.fieldError('preset')).toMatch(/arith_tool/);
  });

  it("starts the config as shown, follows the run's events, and ignores another run's", async () => {
    const { state, started, emit, calls } = makeState();
    await state.load();
    state.setField('training.max_steps', 3);
    await state.start();
    expect(started[0].config.training.max_steps).toBe(3);
    expect(state.runId).toBe('run-1');
    emit({ type: 'status', run_id: 'run-1', status: 'running', backend: 'wasm' });
    emit({ type: 'update', run_id: 'run-1', step: 1, metrics: { reward: 0.5 } });
    emit({ type: 'update', run_id: 'other', step: 1, metrics: { reward: 9 } });
    emit({ type: 'evaluation', run_id: 'run-1', step: 1, env: 'arith_tool', split: 'test', success: 0.25, n: 8 });
    emit({ type: 'evaluation', run_id: 'run-1', step: 1, env: 'arith_tool', split: 'validation', success: 1, n: 8 });
    emit({ type: 'judge-failures', run_id: 'run-1', judge_id: 'gpt', failed: 2, total: 5, last_reason: 'timeout' });
    emit({ type: 'checkpoint', run_id: 'run-1', step: 1, checkpoint_id: 'cp-1' });
    expect(state).toMatchObject({
      status: 'running',
      backend: 'wasm',
      running: true,
      lastCheckpoint: { step: 1, id: 'cp-1' },
    });
    expect(state.metrics.latest('reward')).toBe(0.5);
    expect(state.heldOut).toEqual([{ step: 1, env: 'arith_tool', successes: 2, n: 8 }]);
    expect(state.judgeFailures.gpt).toEqual({ failed: 2, total: 5, last_reason: 'timeout' });
    await state.pause();
    await state.stop();
    expect(calls).toEqual(['pause', 'stop']);
    emit({ type: 'error', run_id: 'run-1', message: 'worker died', fatal: true });
    expect(state.status).toBe('error');
    expect(state.errors.map((e) => e.message)).toEqual(['worker died']);
  });

  it('shows a refused start as an error', async () => {
    const { state, refuseWith } = makeState();
    await state.load();
    refuseWith('A run is already going in this tab');
    await state.start();
    expect(state).toMatchObject({ status: 'error', controlError: 'A run is already going in this tab' });
  });

  it('offers an interrupted run with its config, and resumes it with its history in the charts', async () => {
    const config: RunConfig = {
      ...DEFAULT_CONFIG,
      name: 'left-behind',
      training: { ...DEFAULT_CONFIG.training, max_steps: 9 },
    };
    const interrupted: InterruptedRun = {
      id: 'old',
      name: 'left-behind',
      status: 'paused',
      lastStep: 4,
      checkpointStep: 3,
      maxSteps: 9,
      config,
      updated: 1,
    };
    const { state, started } = makeState({
      interruptedRuns: async () => [interrupted],
      history: async () => ({
        metrics: [{ run_id: 'old', step: 3, metrics: { reward: 0.75 }, time: 0 }],
        markers: [],
        heldOut: [{ step: 3, env: 'arith_tool', successes: 1, n: 4 }],
      }),
    });
    await state.load();
    expect(state.interrupted.map((r) => r.id)).toEqual(['old']);
    expect(state.config?.name).toBe('left-behind');
    await state.resumeInterrupted('old');
    expect(started).toEqual([{ config: expect.objectContaining({ name: 'left-behind' }), resumeRunId: 'old' }]);
    expect(state.interrupted).toEqual([]);
    expect(state.progress).toMatchObject({ done: 3, total: 9 });
    expect(state.metrics.latest('reward')).toBe(0.75);
    expect(state.metrics.latest('eval/arith_tool/success')).toBe(0.25);
  });

  it('stops listening when disposed', async () => {
    const { state, listeners } = makeState();
    await state.load();
    expect(listeners.size).toBe(1);
    state.dispose();
    expect(listeners.size).toBe(0);
  });
});
