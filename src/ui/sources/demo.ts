/** Demo data sources (`?demo`): scripted episodes, a simulated run, in-memory judges and storage. */
import type { Trajectory } from '../../contracts.ts';
import type { CalibrationMap, RunConfig } from '../../config/schema.ts';
import type { RunController, RunEvent, RunListener } from '../../pipeline/operations/events.ts';
import type { LearnSource } from '../screens/learn/source.ts';
import type { JudgesSource, RemoteJudgeSettings } from '../screens/judges/source.ts';
import type { ModelsSource } from '../screens/models/source.ts';
import type { PlaygroundSource } from '../screens/playground/source.ts';
import type { TrainSource } from '../screens/train/train.svelte.ts';
import { demoAnswer, demoChainTrajectory, demoTask, demoTrajectory, demoVotes } from './demo-data.ts';
import type { AppSources } from './app-sources.ts';
import { MemoryTrajectorySource } from './memory-trajectories.ts';
import { demoEnvironments } from './demo-environments.ts';
import { creditConfig, episodeTurns, groupCredits, uncredited } from '../../pipeline/app/episode-turns.ts';
import { tokenDetail } from '../../pipeline/app/trajectories.ts';
import { calibrationFileOf, readCalibrationFile } from '../../pipeline/operations/calibration.ts';

/** The config the demo's made-up run "trained" with: the defaults. */
const DEMO_CONFIG = creditConfig();

const wait = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      reject(new DOMException('stopped', 'AbortError'));
    });
  });

const ENVS = [
  {
    id: 'arith_tool',
    title: 'Arithmetic with a calculator',
    description: 'Integer arithmetic; the calc tool gives exact results.',
    levels: [1, 2, 3, 4, 5],
  },
  {
    id: 'json_extract',
    title: 'JSON extraction',
    description: 'Pull fields out of a document with the js tool.',
    levels: [1, 2, 3],
  },
  // The default preset's environment, so the Train screen's first config is valid in the demo too.
  {
    id: 'func_trace',
    title: 'Trace a chain of function calls',
    description: 'Read a function, then the one its file names, then run both with js.',
    levels: [1, 2, 3],
  },
];

function demoPlayground(): PlaygroundSource {
  let modelLoaded = false;
  return {
    environments: async () => ENVS,
    policies: async () => [
      { id: 'local', label: 'Local model (spindle-micro)', unavailable: null, model: 'spindle-micro' },
      { id: 'remote', label: 'Remote model', unavailable: 'no key set' },
    ],
    tasks: async (env, difficulty, count) =>
      Array.from({ length: count }, (_, i) => demoTask(env, difficulty, 100 + i)),
    customTask: async (env, difficulty, prompt) => ({ ...demoTask(env, difficulty, 999), id: 'custom', prompt }),
    async runEpisode({ task, seed, policy }, onEvent, signal) {
      // The engine loads the local model with the first episode that plays it; the demo's takes a moment too.
      if (policy === 'local' && !modelLoaded) {
        await wait(400, signal);
        modelLoaded = true;
      }
      // A two-call chain (product, then sum) whose first call may fail and be retried: see demoChain.
      const played = demoChainTrajectory(seed, task);
      for (const [t, message] of played.messages.filter((m) => m.role === 'assistant').entries()) {
        for (const piece of message.content.match(/.{1,4}/gs) ?? []) {
          await wait(12, signal);
          onEvent({ type: 'text', piece });
        }
        for (const step of played.steps.filter((s) => s.turn === t)) onEvent({ type: 'step', step });
      }
      return {
        ...played,
        id: `demo-play-${seed}`,
        run_id: 'playground',
        group_id: `${task.id}#${seed}`,
        judge_score: null,
        votes: [],
        success: null,
        created_at: Date.now(),
      };
    },
    async judge(group, signal) {
      await wait(300, signal);
      return group.map((t) => {
        const score = t.final_response?.includes(String(demoAnswer(t.task_description))) ? 1 : 0;
        const votes = demoVotes(score, t.seed);
        return { score: (votes[0].score! + votes[1].score!) / 2, votes };
      });
    },
  };
}

/** A finished run stored before this page opened: its held-out success is there to compare with. */
const DEMO_EARLIER_RUN = 'demo-earlier-run';

function demoEarlierHeldOut() {
  return [0, 10, 20, 30, 40].flatMap((step) => [
    { step, env: 'arith_tool', successes: Math.min(8, 2 + Math.floor(step / 10)), n: 8 },
    { step, env: 'json_extract', successes: Math.min(8, 1 + Math.floor(step / 10)), n: 8 },
  ]);
}

class DemoRunController implements RunController {
  private listeners = new Set<RunListener>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private step = 0;
  private total = 0;
  private runId = '';
  /** The baseline evaluation's items still to report, one a tick, before the first update (as a real run does). */
  private baseline: { env: string; done: number }[] = [];
  /** With β = 0 a real run measures no KL, so the demo logs none either. */
  private klBeta = 0;
  /** The environments the run evaluates. */
  private envs: string[] = [];

  private emit(e: RunEvent) {
    for (const l of this.listeners) l(e);
  }
  async start(config: RunConfig): Promise<string> {
    this.runId = `demo-run-${Date.now()}`;
    this.step = 0;
    this.total = config.training.max_steps;
    this.klBeta = config.grpo.kl_beta;
    this.envs = config.tasks.environments;
    this.baseline = config.tasks.environments.flatMap((env) => Array.from({ length: 9 }, (_, done) => ({ env, done })));
    // A real run stays 'starting' while its base model loads; the demo's "model" takes a moment too.
    this.emit({ type: 'status', run_id: this.runId, status: 'starting' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    this.resume();
    return this.runId;
  }
  async pause() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.emit({ type: 'status', run_id: this.runId, status: 'paused' });
  }
  async resume() {
    this.emit({ type: 'status', run_id: this.runId, status: 'running', backend: 'wasm' });
    this.timer = setInterval(() => this.tick(), 250);
  }
  async stop() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.emit({ type: 'status', run_id: this.runId, status: 'stopped' });
  }
  subscribe(l: RunListener) {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  private tick() {
    const item = this.baseline.shift();
    if (item) {
      const progress = { run_id: this.runId, step: 0, env: item.env, split: 'test' as const, total: 8 };
      this.emit({ type: 'evaluation-progress', ...progress, done: item.done });
      if (item.done === 8) this.emit({ type: 'evaluation', ...progress, success: 0.25, n: 8 });
      return;
    }
    const s = ++this.step;
    const r = 0.3 + 0.6 * (1 - Math.exp(-s / 15)) + 0.05 * Math.sin(s);
    this.emit({
      type: 'update',
      run_id: this.runId,
      step: s,
      metrics: {
        reward: r,
        reward_std: 0.3 - r * 0.2,
        'train/loss': 0.1 * Math.cos(s / 2),
        ...(this.klBeta > 0 ? { kl: 0.002 * s } : {}),
        'clip_ratio/region_mean': 0.05 + 0.02 * Math.sin(s / 3),
        entropy: 1.2 - s * 0.01,
        'completions/mean_length': 40 + 5 * Math.sin(s / 4),
        'tools/failure_frequency': 0.3 * Math.exp(-s / 10),
      },
    });
    if (s % 5 === 0) {
      // The config's environments, as a real run evaluates them (the baseline's too).
      this.envs.forEach((env, i) =>
        this.emit({
          type: 'evaluation',
          run_id: this.runId,
          step: s,
          env,
          split: 'test',
          success: Math.max(0, Math.min(1, r + 0.05 - 0.15 * i)),
          n: 8,
        }),
      );
    }
    if (s === 12)
      this.emit({
        type: 'marker',
        run_id: this.runId,
        marker: {
          kind: 'curriculum',
          run_id: this.runId,
          step: s,
          env: 'arith_tool',
          from: 1,
          to: 2,
          time: Date.now(),
        },
      });
    if (s === 20)
      this.emit({
        type: 'marker',
        run_id: this.runId,
        marker: {
          kind: 'regression',
          run_id: this.runId,
          step: s,
          benchmark: 'capability',
          baseline: 0.8,
          current: 0.7,
          rolled_back_to: 10,
          time: Date.now(),
        },
      });
    this.emit({
      type: 'progress',
      run_id: this.runId,
      done: s,
      total: this.total,
      eta_seconds: (this.total - s) * 0.25,
      tokens_per_second: 850 + 50 * Math.sin(s),
      queue: { pending_tasks: 4, in_flight: 2, ready_groups: 1, offpolicy_updates: 1 },
    });
    if (s >= this.total) {
      void this.stop();
      this.emit({ type: 'status', run_id: this.runId, status: 'finished' });
    }
  }
}

function demoJudges(): JudgesSource {
  let remotes: RemoteJudgeSettings[] = [
    { id: 'remote-1', base_url: 'https://api.openai.com/v1', model: 'gpt-4o-mini', enabled: true, hasKey: true },
  ];
  const calibrated = new Map<string, CalibrationMap>();
  return {
    load: async () => ({
      remotes,
      inBrowser: { enabled: false, unavailable: null },
      calibratable: ['rule', ...remotes.map((r) => r.id)],
      calibrated: [...calibrated.keys()],
    }),
    saveRemote: async (s) => {
      remotes = [...remotes.filter((r) => r.id !== s.id), { ...s, hasKey: true }];
    },
    removeRemote: async (id) => {
      remotes = remotes.filter((r) => r.id !== id);
    },
    forgetKey: async () => {},
    setInBrowser: async () => {},
    testConnection: async (s) => {
      await wait(300);
      throw new Error(`Could not reach ${s.base_url} (demo mode makes no network requests).`);
    },
    async calibrate(_id, items, onProgress, signal) {
      for (let i = 1; i <= items.length; i++) {
        await wait(20, signal);
        onProgress(i, items.length);
      }
      return {
        n: items.length,
        scored: items.length,
        spearman: 0.71,
        krippendorff_alpha: 0.64,
        mae_before: 0.21,
        mae_after: 0.12,
        map: { kind: 'affine', a: 0.8, b: 0.1 },
      };
    },
    useCalibration: async (id, map) => {
      calibrated.set(id, map);
    },
    calibrationFile: async () => calibrationFileOf(Object.fromEntries(calibrated)),
    loadCalibrationFile: async (text, fileName) => {
      const { maps } = readCalibrationFile(text, fileName);
      for (const [id, map] of Object.entries(maps)) calibrated.set(id, map);
      return Object.keys(maps);
    },
  };
}

function demoModels(): ModelsSource {
  const slow = async (onProgress: (d: number, t: number | null) => void, signal: AbortSignal) => {
    for (let i = 1; i <= 10; i++) {
      await wait(60, signal);
      onProgress(i * 1e5, 1e6);
    }
  };
  return {
    modelCards: async () => [
      {
        name: 'spindle-micro',
        readme:
          '---\nlicense: mit\n---\n# spindle-micro\n\nA **0.8M-parameter** Qwen2-style policy trained for tool use.\n\n## Rebuild\n\n```sh\nnpm run build:model\n```\n\n| eval | success |\n|---|---|\n| arith_tool L1 | 0.62 |',
      },
    ],
    checkpoints: async () => [
      {
        id: 'cp-1',
        run_id: 'run-1',
        run_name: 'demo',
        step: 10,
        kind: 'checkpoint',
        created_at: Date.now(),
        bytes: 210_000,
        evals: { 'eval/arith_tool/success': 0.55 },
      },
    ],
    storage: async () => ({
      usage: 12_400_000,
      quota: 2_000_000_000,
      persisted: false,
      runs: [
        { id: 'run-1', name: 'demo', status: 'completed', created_at: Date.now(), trajectories: 120, checkpoints: 1 },
        { id: 'run-2', name: 'demo 2', status: 'completed', created_at: Date.now(), trajectories: 80, checkpoints: 1 },
      ],
    }),
    importModelFromUrl: async (_u, p, s) => {
      await slow(p, s);
      throw new Error('Demo mode does not download models.');
    },
    importModelFromFiles: async (_f, p, s) => {
      await slow(p, s);
      return 'imported-model';
    },
    exportItem: async (kind, _t, p, s) => {
      await slow(p, s);
      return { filename: `${kind}.bin`, blob: new Blob(['demo']) };
    },
    importAdapter: async () => {
      throw new Error('adapter_config.json is missing from the zip.');
    },
    importDataset: async (_f, p, s) => {
      await slow(p, s);
      return { trajectories: 3 };
    },
    deleteRun: async () => {},
  };
}

export function createDemoSources(): AppSources {
  const trajectories: Trajectory[] = Array.from({ length: 5000 }, (_, i) => demoTrajectory(i));
  const learn: LearnSource = { runs: async () => [], update: async () => null };
  const train: TrainSource = {
    controller: new DemoRunController(),
    environments: async () => ENVS.map((e) => e.id),
    runs: async () => [{ id: DEMO_EARLIER_RUN, name: 'earlier-run' }],
    history: async (runId) => ({
      metrics: [],
      markers: [],
      heldOut: runId === DEMO_EARLIER_RUN ? demoEarlierHeldOut() : [],
    }),
  };
  return {
    playground: demoPlayground(),
    train,
    // Credits from each demo group with the trainer's own functions, as for a stored run.
    trajectories: new MemoryTrajectorySource(
      () => trajectories,
      (t) => {
        const members = trajectories.filter((m) => m.group_id === t.group_id);
        const trained = members.filter((m) => m.split === 'train');
        const credits = groupCredits(trained, DEMO_CONFIG);
        const creditOf = (m: Trajectory) =>
          m.split === 'train' ? credits[trained.indexOf(m)] : uncredited('held_out');
        const credit = creditOf(t);
        return {
          turns: episodeTurns(t, credit),
          tokens: tokenDetail(t, credit),
          group: members.length > 1 ? members.map((m) => ({ trajectory: m, turns: episodeTurns(m, creditOf(m)) })) : [],
        };
      },
      { 'run-1': 'demo', 'run-2': 'demo 2' },
    ),
    judges: demoJudges(),
    models: demoModels(),
    learn,
    environments: demoEnvironments(ENVS),
  };
}
