/**
 * Train screen state: the run config (YAML text is the truth; the form edits it in place through
 * src/config so comments survive), validation as you type, run controls over a RunController, and
 * the live numbers (progress, backend, tokens/s, metrics, markers) from its event stream.
 * Metrics land in a plain MetricTable and charts redraw once per animation frame (`chartVersion`).
 */
import type { MetricsRecord, RunMarker } from '../../../contracts.ts';
import type { RunConfig } from '../../../config/schema.ts';
import { DEFAULT_CONFIG } from '../../../config/schema.ts';
import { DEFAULT_PRESET, PRESETS, applyPresetToYaml, presetConfig } from '../../../config/presets.ts';
import { parseRunConfigYaml, setConfigValue, stringifyRunConfig, type ConfigError } from '../../../config/yaml.ts';
import type { QueueSizes, RunController, RunEvent, RunStatus } from '../../../pipeline/operations/events.ts';
import { applyJudgeSwitches, type JudgeSwitches } from '../../../pipeline/operations/judge-settings.ts';
import { FrameBatcher } from '../../lib/frame-batcher.ts';
import type { NamedRun } from '../../lib/run-labels.ts';
import { errorMessage } from '../../lib/format.ts';
import type { ComparedRun, HeldOutResult } from './held-out.ts';
import { advanceEvaluation, type EvaluationProgress } from './evaluation-progress.ts';
import { MetricTable } from './metric-table.ts';

export interface TrainSource {
  controller: RunController;
  /** Environment names the config may list (for validation and the form's checkboxes). */
  environments(): Promise<string[]>;
  /** Runs a closed page left running or paused (none live in another tab): offered for resuming. */
  interruptedRuns?(): Promise<InterruptedRun[]>;
  /** The judges switched on in the Judges screen; the config shown here is made to list them. */
  judgeSwitches?(): Promise<JudgeSwitches>;
  /** The imported model's `model.base_model` (Models screen), or null: offered as a base, never put in the config unasked. */
  importedBase?(): Promise<string | null>;
  /** The stored runs (training runs, newest first), offered to compare held-out success with. */
  runs?(): Promise<NamedRun[]>;
  /** A run's stored metrics and markers, to refill the charts when it resumes (and its held-out results to compare). */
  history?(runId: string): Promise<{ metrics: MetricsRecord[]; markers: RunMarker[]; heldOut: HeldOutResult[] }>;
}

export interface InterruptedRun {
  id: string;
  name: string;
  status: 'running' | 'paused';
  /** Last step with metrics, or -1. */
  lastStep: number;
  /** The update its latest checkpoint was taken after (where Resume continues), or null when none was. */
  checkpointStep: number | null;
  maxSteps: number;
  config: RunConfig;
  /** Milliseconds since the epoch. */
  updated: number;
}

export interface RunProgress {
  done: number;
  total: number;
  eta_seconds: number | null;
  tokens_per_second: number | null;
  queue: QueueSizes | null;
}

export type { HeldOutResult } from './held-out.ts';

export interface RunErrorNote {
  message: string;
  fatal: boolean;
  time: number;
}

const RUNNING: RunStatus[] = ['starting', 'running', 'paused', 'stopping'];

export class TrainState {
  // A first run should show learning: the preset whose held-out success rises within minutes.
  private readonly initialYaml = stringifyRunConfig(presetConfig(DEFAULT_PRESET));
  yamlText = $state(this.initialYaml);
  knownEnvironments = $state<string[]>([]);
  /** Errors from form edits that could not be applied (the YAML is left unchanged). */
  formErrors = $state<Record<string, string>>({});

  status = $state<RunStatus>('idle');
  statusMessage = $state<string | null>(null);
  runId = $state<string | null>(null);
  backend = $state<string | null>(null);
  progress = $state<RunProgress | null>(null);
  /** The evaluation in progress (items done of total), or null when none is. */
  evaluation = $state<EvaluationProgress | null>(null);
  /** Episodes this run has finished: what shows the rollouts moving before the first update lands. */
  episodesFinished = $state(0);
  errors = $state<RunErrorNote[]>([]);
  markers = $state<RunMarker[]>([]);
  lastCheckpoint = $state<{ step: number; id: string } | null>(null);
  controlError = $state<string | null>(null);
  /** The run's held-out (test split) evaluations, in the order they came. */
  heldOut = $state<HeldOutResult[]>([]);
  /** Judges of this run that could not score some trajectories, by judge id. */
  judgeFailures = $state<Record<string, { failed: number; total: number; last_reason: string }>>({});
  /** What the form offers to train instead of the configured base: the imported model, if any. */
  importedBase = $state<string | null>(null);
  /** Runs interrupted by a page close or reload, newest first. */
  interrupted = $state<InterruptedRun[]>([]);
  /** Bumped at most once per animation frame when new metrics arrived; charts redraw on change. */
  chartVersion = $state(0);
  /** EMA weight of the reward curve (0: raw only); the raw curve stays drawn, faint, beneath. */
  smoothing = $state(0.6);
  /** The config of the run on the charts (null before one starts: the config being edited stands in). */
  activeConfig = $state<RunConfig | null>(null);
  /** Another run whose held-out success is drawn beside this one's. */
  compare = $state<ComparedRun | null>(null);
  compareId = $state<string | null>(null);
  /** Why the compared run draws nothing (no held-out results, or they could not be read). */
  compareNote = $state<string | null>(null);
  /** Stored runs that can be compared with (this run left out). */
  storedRuns = $state<NamedRun[]>([]);

  readonly metrics = new MetricTable();
  private readonly batcher = new FrameBatcher(() => this.chartVersion++);
  /** The Judges screen's switches the config last took in (as JSON); null before the first sync. */
  private appliedSwitches: string | null = null;
  /** The switches as the store had them when the screen loaded (JSON; null if they could not be read). */
  private switchesAtLoad: Promise<string | null> | null = null;
  private unsubscribe: (() => void) | null = null;
  /** The last config that validated, so the form keeps showing values while the YAML is broken. */
  private lastGood: RunConfig = presetConfig(DEFAULT_PRESET);

  /** `now` (ms) times an evaluation's items for its time left. */
  constructor(
    private readonly source: TrainSource,
    private readonly now: () => number = () => performance.now(),
  ) {}

  readonly parsed = $derived(
    parseRunConfigYaml(this.yamlText, {
      knownEnvironments: this.knownEnvironments.length ? this.knownEnvironments : undefined,
    }),
  );
  readonly config = $derived(this.parsed.config);
  readonly configErrors = $derived<ConfigError[]>(this.parsed.errors);
  readonly shown = $derived(this.config ?? this.lastGood);
  readonly running = $derived(RUNNING.includes(this.status));
  /** What the charts describe (KL off when its β is 0): the run shown, else the config about to run. */
  readonly chartConfig = $derived(this.activeConfig ?? this.shown);
  readonly canStart = $derived(!this.running && this.config !== null && this.configErrors.length === 0);
  // A run does GRPO: the SFT and transfer workflows are the CLI's (their presets say which command).
  readonly presets = Object.entries(PRESETS)
    .filter(([, p]) => !p.cli)
    .map(([name, p]) => ({ name, description: p.description }));

  async load(): Promise<void> {
    this.switchesAtLoad ??=
      this.source.judgeSwitches?.().then(
        (s) => JSON.stringify(s),
        () => null,
      ) ?? Promise.resolve(null);
    try {
      this.knownEnvironments = await this.source.environments();
    } catch {
      // Without the list, environment names are not checked here; the run itself will reject bad ones.
    }
    this.unsubscribe ??= this.source.controller.subscribe((e) => this.onEvent(e));
    this.importedBase = (await this.source.importedBase?.().catch(() => null)) ?? null;
    await this.loadRuns();
    if (!this.running) {
      try {
        this.interrupted = (await this.source.interruptedRuns?.()) ?? [];
        // The newest interrupted run's config comes back with it, unless the user already edited this one.
        if (this.interrupted.length && this.yamlText === this.initialYaml)
          this.setYaml(stringifyRunConfig(this.interrupted[0].config));
      } catch {
        // Not being offered a resume is no worse than before; the run's data stays in the store.
      }
    }
    await this.syncJudges();
  }

  /**
   * Makes the config's judges agree with the Judges screen's switches (on load and on each visit), by
   * editing the YAML, so what the Form and YAML show is exactly who will judge the next run. Switches
   * are brought in when they change; the user's own edits stand otherwise: a config the user wrote (or
   * a resumed run's) is kept as written until a switch changes, and an edit made while the switches are
   * being read wins.
   */
  async syncJudges(): Promise<void> {
    if (this.running || !this.source.judgeSwitches) return;
    const startedFrom = this.yamlText;
    let switches: JudgeSwitches;
    try {
      switches = await this.source.judgeSwitches();
    } catch {
      return; // Without the settings the config stays as written; it still says who judges.
    }
    const atLoad = this.appliedSwitches === null ? await this.switchesAtLoad : null;
    if (this.yamlText !== startedFrom) return;
    const key = JSON.stringify(switches);
    // A config the user wrote (or a resumed run's) took in the switches as they stood when the screen loaded.
    if (this.appliedSwitches === null && this.yamlText !== this.initialYaml) this.appliedSwitches = atLoad ?? key;
    if (key === this.appliedSwitches) return;
    this.appliedSwitches = key;
    const config = this.config;
    if (!config) return;
    const next = applyJudgeSwitches(config, switches);
    if (next === config) return;
    // n_judges may not exceed the judge count: lower it before removing, raise it after adding.
    const edits: [string, unknown][] = [
      ['judge.judges', next.judge.judges],
      ['judge.n_judges', next.judge.n_judges],
    ];
    if (next.judge.judges.length < config.judge.judges.length) edits.reverse();
    if (next.judge.calibration !== config.judge.calibration) edits.push(['judge.calibration', next.judge.calibration]);
    for (const [path, value] of edits) this.setField(path, value);
  }

  /** Refreshes the runs offered for comparison (on load and when a run ends, so it can be compared with the next). */
  async loadRuns(): Promise<void> {
    try {
      this.storedRuns = (await this.source.runs?.()) ?? [];
    } catch {
      // Without the list there is nothing to compare with; the run's own charts are unaffected.
    }
  }

  readonly comparable = $derived(this.storedRuns.filter((r) => r.id !== this.runId));

  /** Draws `runId`'s held-out success beside this run's (null: none). */
  async compareWith(runId: string | null): Promise<void> {
    this.compareId = runId;
    this.compareNote = null;
    if (runId === null) {
      this.compare = null;
      return;
    }
    const name = this.storedRuns.find((r) => r.id === runId)?.name ?? runId;
    try {
      const history = await this.source.history?.(runId);
      if (this.compareId !== runId) return;
      const heldOut = history?.heldOut ?? [];
      this.compare = { name, heldOut };
      if (!heldOut.length) this.compareNote = `${name} has no held-out results yet.`;
    } catch (err) {
      if (this.compareId !== runId) return;
      this.compare = null;
      this.compareNote = `Could not read ${name}'s results: ${errorMessage(err)}`;
    }
  }

  dispose(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.batcher.cancel();
  }

  setYaml(text: string): void {
    this.yamlText = text;
    if (this.config) this.lastGood = this.config;
    this.formErrors = {};
  }

  /** Form edit of one field: rewrites that key in the YAML (keeping comments) or shows why not. */
  setField(path: string, value: unknown): void {
    try {
      // JSON is YAML flow syntax, so strings stay strings and arrays stay arrays.
      this.setYaml(
        setConfigValue(this.yamlText, path, JSON.stringify(value), { knownEnvironments: this.knownEnvironments }),
      );
    } catch (err) {
      this.formErrors = { ...this.formErrors, [path]: errorMessage(err) };
    }
  }

  /**
   * Writes the preset's settings into the config, and only those: judges switched on, the base model and
   * every setting the preset does not name stay. A broken YAML gets them on the last good config.
   */
  applyPreset(name: string): void {
    const base = this.config ? this.yamlText : stringifyRunConfig(this.shown);
    try {
      this.setYaml(applyPresetToYaml(base, name, { knownEnvironments: this.knownEnvironments }));
    } catch (err) {
      this.formErrors = { ...this.formErrors, preset: errorMessage(err) };
    }
  }

  resetToDefaults(): void {
    this.setYaml(stringifyRunConfig(structuredClone(DEFAULT_CONFIG)));
  }

  /** The first problem with a field (form edits first, then the YAML's validation). */
  fieldError(path: string): string | null {
    return (
      this.formErrors[path] ??
      this.configErrors.find((e) => e.path === path || e.path.startsWith(`${path}.`))?.message ??
      null
    );
  }

  async start(): Promise<void> {
    if (!this.config) return;
    this.metrics.clear();
    this.chartVersion++;
    this.markers = [];
    this.errors = [];
    this.judgeFailures = {};
    this.heldOut = [];
    this.progress = null;
    this.evaluation = null;
    this.lastCheckpoint = null;
    this.runId = null;
    this.activeConfig = $state.snapshot(this.config) as RunConfig;
    await this.control(async () => {
      this.status = 'starting';
      this.runId = await this.source.controller.start($state.snapshot(this.config) as RunConfig);
    });
  }

  /** Continues an interrupted run from its last checkpoint; its stored metrics refill the charts. */
  async resumeInterrupted(runId: string): Promise<void> {
    const run = this.interrupted.find((r) => r.id === runId);
    if (!run || this.running) return;
    this.interrupted = this.interrupted.filter((r) => r.id !== runId);
    this.setYaml(stringifyRunConfig(run.config));
    this.metrics.clear();
    this.markers = [];
    this.errors = [];
    this.judgeFailures = {};
    this.heldOut = [];
    this.progress = {
      done: run.checkpointStep ?? 0,
      total: run.maxSteps,
      eta_seconds: null,
      tokens_per_second: null,
      queue: null,
    };
    this.episodesFinished = 0;
    this.evaluation = null;
    this.lastCheckpoint = null;
    this.runId = runId;
    this.activeConfig = $state.snapshot(run.config) as RunConfig;
    this.status = 'starting';
    try {
      const history = await this.source.history?.(runId);
      for (const record of history?.metrics ?? []) this.metrics.add(record.step, record.metrics);
      for (const e of history?.heldOut ?? [])
        this.metrics.add(e.step, { [`eval/${e.env}/success`]: e.successes / e.n });
      this.heldOut = history?.heldOut ?? [];
      this.markers = history?.markers ?? [];
    } catch {
      // Charts start empty instead; the run itself resumes all the same.
    }
    this.chartVersion++;
    const config = $state.snapshot(run.config) as RunConfig;
    await this.control(() => this.source.controller.start(config, { resumeRunId: runId }));
  }

  pause = () => this.control(() => this.source.controller.pause());
  resume = () => this.control(() => this.source.controller.resume());
  stop = () => this.control(() => this.source.controller.stop());

  private async control(action: () => Promise<unknown>): Promise<void> {
    this.controlError = null;
    try {
      await action();
    } catch (err) {
      this.controlError = errorMessage(err);
      if (this.status === 'starting') this.status = 'error';
    }
  }

  onEvent(event: RunEvent): void {
    if (this.runId && event.run_id !== this.runId && event.type !== 'status') return;
    switch (event.type) {
      case 'status':
        this.runId ??= event.run_id;
        this.status = event.status;
        this.statusMessage = event.message ?? null;
        if (!this.running) {
          this.evaluation = null;
          void this.loadRuns();
        }
        if (event.backend) this.backend = event.backend;
        break;
      case 'update':
        this.metrics.add(event.step, event.metrics);
        this.batcher.schedule();
        break;
      case 'evaluation-progress':
        this.evaluation = advanceEvaluation(this.evaluation, event, this.chartConfig.tasks.environments, this.now());
        break;
      case 'evaluation':
        // Kept between environments (their items add up to the time left); gone once the last one is in.
        if (
          this.evaluation?.env === event.env &&
          this.evaluation.split === event.split &&
          this.evaluation.envIndex === this.evaluation.envCount - 1
        )
          this.evaluation = null;
        if (event.split === 'test') {
          this.heldOut.push({
            step: event.step,
            env: event.env,
            successes: Math.round(event.success * event.n),
            n: event.n,
          });
          this.metrics.add(event.step, { [`eval/${event.env}/success`]: event.success });
          this.batcher.schedule();
        }
        break;
      case 'marker':
        this.markers.push(event.marker);
        this.batcher.schedule();
        break;
      case 'trajectory':
        this.episodesFinished++;
        break;
      case 'progress':
        this.progress = {
          done: event.done,
          total: event.total,
          eta_seconds: event.eta_seconds,
          tokens_per_second: event.tokens_per_second,
          queue: event.queue,
        };
        break;
      case 'judge-failures':
        this.judgeFailures = {
          ...this.judgeFailures,
          [event.judge_id]: { failed: event.failed, total: event.total, last_reason: event.last_reason },
        };
        break;
      case 'checkpoint':
        this.lastCheckpoint = { step: event.step, id: event.checkpoint_id };
        break;
      case 'error':
        this.errors.push({ message: event.message, fatal: event.fatal, time: Date.now() });
        if (event.fatal) this.status = 'error';
        break;
      default:
        break;
    }
  }
}
