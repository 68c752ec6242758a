/**
 * The engine: what the engine web worker exposes (workers/engine.worker.ts), built over injected
 * dependencies so Node tests drive the same object with worker_threads and a fake IndexedDB.
 *
 * A facade over three jobs: the tfjs backend (backend-supervisor.ts), the models and which one each use
 * gets (model-shelf.ts), and here the run control (one run per tab, its tab lock), playground episodes
 * (each in a rollout worker, like a run's), and merged-weights exports. A WebGPU device loss switches to wasm, says so, and
 * resumes an interrupted run from its last checkpoint (every finished trajectory is already in the store).
 * Judges come only from the run's config: the engine reads no UI setting.
 *
 * Everything crossing the worker boundary is plain data or a comlink proxy; listeners are kept by
 * numeric id so the caller can drop them without proxying functions back.
 */
import * as Comlink from 'comlink';
import type { RunConfig } from '../../config/schema.ts';
import type { EnvironmentSource, Split, Task, Trajectory } from '../../contracts.ts';
import { zipFiles } from '../../export/peft.ts';
import type { BackendChoice } from '../../kernels/backend.ts';
import { readSafetensors } from '../../hub/safetensors.ts';
import type { Store } from '../../store/index.ts';
import { BackendSupervisor } from './backend-supervisor.ts';
import type {
  EngineDeps,
  LoadedPolicyModel,
  MergeRequest,
  PlayEvent,
  PlayRequest,
  TokenizerSpec,
} from './engine-api.ts';
import {
  bootstrapPolicy,
  checkBootstrapRequest,
  type BootstrapEvent,
  type BootstrapReport,
  type EngineBootstrapRequest,
} from '../operations/bootstrap.ts';
import { DEFAULT_CONFIG } from '../../config/schema.ts';
import { LocalPolicy } from '../../rollout/local-policy.ts';
import { tokenizerSpec } from './tokenizer-spec.ts';
import type { RunEvent, RunListener } from '../operations/events.ts';
import { PlaygroundEpisodes } from './play-episode.ts';
import {
  CHECK_POLICY_ITEMS,
  EnvironmentWorkshop,
  type CheckPolicy,
  type EngineEnvironmentInfo,
  type EnvironmentCheck,
  type EnvironmentDraft,
  type EnvironmentLoad,
} from './environment-workshop.ts';
import { ModelShelf, type ImportedModelInfo, type ModelImportSource, type PolicyStatus } from './model-shelf.ts';
import type { DownloadProgress } from '../../hub/hub.ts';
import { mergedModel } from '../operations/merged-export.ts';
import { PipelineRun } from '../operations/run.ts';
import { readSecrets, secretLookup } from './secrets.ts';
import { WASM_HEAP_BYTES } from '../../train/update-fit.ts';

/** Statuses in which a run is interrupted by a device loss (and, with 'stopping', blocks a new start). */
const ACTIVE = new Set(['starting', 'running', 'paused']);
/** How long a run on a lost device gets to wind down before it is abandoned. */
const LOST_RUN_GRACE_MS = 20_000;

export class Engine {
  private readonly backend: BackendSupervisor;
  private readonly shelf: ModelShelf;
  private readonly runListeners = new Map<number, RunListener>();
  private nextId = 1;
  private store: Promise<Store> | null = null;
  private run: PipelineRun | null = null;
  private unsubscribeRun: (() => void) | null = null;
  private runState: { id: string; config: RunConfig; status: string } | null = null;
  private readonly episodes: PlaygroundEpisodes;
  /** The user's environments: checked, installed and used here, never on the page (environment-workshop.ts). */
  private readonly environments = new EnvironmentWorkshop();
  /** Where hub ids download from: the page's `?hf_endpoint=` (a mirror, or a local server in tests), else huggingface.co. */
  private hubEndpoint: string | undefined;
  /** The bootstrap going in this tab (its stop), if any. */
  private bootstrapping: AbortController | null = null;

  constructor(private readonly deps: EngineDeps) {
    this.backend = new BackendSupervisor(deps, deps.cores, (reason) => void this.onDeviceLost(reason));
    this.shelf = new ModelShelf({
      ...deps,
      hub: () => ({ cache: deps.hubCache?.() ?? null, endpoint: this.hubEndpoint }),
      memoryLimitBytes: () => (this.backend.choice?.backend === 'wasm' ? WASM_HEAP_BYTES : undefined),
    });
    this.episodes = new PlaygroundEpisodes((generator, tokenizer) =>
      deps.spawnWorker(-1, generator, {}, tokenizer && tokenizerSpec(tokenizer)),
    );
  }

  /**
   * Starts the backend once (later calls return the same choice). `cores` is the page's
   * navigator.hardwareConcurrency: the default rollout pool size, and half of it the wasm threads.
   */
  init(options: { forced?: string | null; cores?: number; hubEndpoint?: string | null } = {}): Promise<BackendChoice> {
    if (options.cores) this.backend.cores = options.cores;
    if (options.hubEndpoint) this.hubEndpoint = options.hubEndpoint;
    return this.backend.init(options.forced ?? null);
  }

  backendInfo(): BackendChoice | null {
    return this.backend.choice;
  }

  /** `listener` hears the current backend now and every change later; returns an id for `unwatchBackend`. */
  watchBackend(listener: (choice: BackendChoice) => void): number {
    return this.backend.watch(listener);
  }

  unwatchBackend(id: number): void {
    this.backend.unwatch(id);
  }

  subscribe(listener: RunListener): number {
    const id = this.nextId++;
    this.runListeners.set(id, listener);
    return id;
  }

  unsubscribe(id: number): void {
    this.runListeners.delete(id);
  }

  /** `environments`: the sources of the user environments `config` names (a resumed run reinstalls its stored ones). */
  async start(
    config: RunConfig,
    options: { resumeRunId?: string; environments?: EnvironmentSource[] } = {},
  ): Promise<string> {
    if (this.runState && (ACTIVE.has(this.runState.status) || this.runState.status === 'stopping'))
      throw new Error('A run is already going in this tab; stop it before starting another.');
    if (this.bootstrapping)
      throw new Error(
        'A bootstrap is going in this tab (Environments screen); wait for it or cancel it before starting a run.',
      );
    // The tab has no transfer loader: a source checkpoint here used to be ignored silently.
    if (!options.resumeRunId && config.transfer.source_checkpoint) {
      throw new Error(
        `transfer.source_checkpoint is set (${config.transfer.source_checkpoint}), but transfer runs from the CLI: spindle transfer init, then spindle transfer train. Clear it to train here.`,
      );
    }
    await this.init();
    if (await this.backend.use(config.model.backend)) this.shelf.dropDeviceModels();
    const store = await this.openStore();
    const run = this.pipelineRun(store, await readSecrets(store), (cfg) =>
      this.shelf.loadForRun(cfg, this.episodes.size > 0),
    );
    this.unsubscribeRun?.();
    this.run = run;
    this.runState = { id: '', config, status: 'starting' };
    const state = this.runState;
    let release: (() => void) | null = null;
    this.unsubscribeRun = run.subscribe((event) => {
      if (event.type === 'status') state.status = event.status;
      if (event.run_id) state.id = event.run_id;
      // The run's lock from its first event (it is stored by then), not once its model has loaded: another
      // tab must not offer a run that is still starting here for resuming.
      if (!release && state.id && ACTIVE.has(state.status)) release = this.deps.lockRun?.(state.id) ?? null;
      if (event.type === 'status' && !ACTIVE.has(event.status) && event.status !== 'stopping') release?.();
      this.emit(event);
    });
    try {
      const id = await run.start(config, options);
      state.id = id;
      if (!release && ACTIVE.has(state.status)) release = this.deps.lockRun?.(id) ?? null;
      return id;
    } catch (error) {
      state.status = 'error';
      throw error;
    }
  }

  /** A run over this engine's rollout workers, with the judges' keys from the settings; `loadModel` gives it its model. */
  private pipelineRun(
    store: Store,
    secrets: Record<string, string>,
    loadModel: (config: RunConfig) => Promise<LoadedPolicyModel>,
  ): PipelineRun {
    let tokenizer: TokenizerSpec | null = null;
    return new PipelineRun({
      store,
      cores: this.backend.cores,
      backend: this.backend.choice!.backend,
      hangTimeoutMs: this.deps.hangTimeoutMs,
      loadModel: async (cfg) => {
        const loaded = await loadModel(cfg);
        tokenizer = tokenizerSpec(loaded.tokenizer);
        return loaded;
      },
      spawnWorker: (index, generator) => this.deps.spawnWorker(index, generator, secrets, tokenizer),
      getSecret: secretLookup(secrets),
    });
  }

  /**
   * The Environments screen's bootstrap (operations/bootstrap.ts): held-out success, demonstrations, SFT,
   * then a GRPO run, on a fresh copy of the run model, which then is the Playground's policy. Its steps
   * come through `onEvent`; `cancelBootstrap` stops it after the current step. One at a time, never beside a run.
   */
  async bootstrap(
    request: EngineBootstrapRequest,
    onEvent: (event: BootstrapEvent) => unknown = () => {},
  ): Promise<BootstrapReport> {
    if (this.bootstrapping) throw new Error('A bootstrap is already going in this tab; wait for it or cancel it.');
    if (this.runState && (ACTIVE.has(this.runState.status) || this.runState.status === 'stopping'))
      throw new Error('A run is going in this tab; stop it before bootstrapping.');
    const controller = new AbortController();
    this.bootstrapping = controller;
    try {
      checkBootstrapRequest(request.config, request.settings);
      await this.init();
      if (await this.backend.use(request.config.model.backend)) this.shelf.dropDeviceModels();
      const store = await this.openStore();
      const secrets = await readSecrets(store);
      await this.environments.install(request.environments);
      const model = await this.shelf.loadForRun(request.config, this.episodes.size > 0);
      return await bootstrapPolicy({
        store,
        config: request.config,
        environments: request.environments,
        model,
        baseModel: request.config.model.base_model,
        settings: request.settings,
        newRun: (trained) => this.pipelineRun(store, secrets, async () => trained),
        judging: { getSecret: secretLookup(secrets) },
        signal: controller.signal,
        onEvent: (event) => void onEvent(event),
      });
    } finally {
      this.bootstrapping = null;
    }
  }

  cancelBootstrap(): void {
    this.bootstrapping?.abort();
  }

  async pause(): Promise<void> {
    await this.run?.pause();
  }

  async resume(): Promise<void> {
    await this.run?.resume();
  }

  async stop(): Promise<void> {
    await this.run?.stop();
  }

  /** What the playground's "local model" option can do now. */
  policyStatus(): PolicyStatus {
    return this.shelf.policyStatus();
  }

  /**
   * Loads a Hugging Face-layout model (Llama/Qwen2 config.json, model.safetensors or its index and
   * shards, tokenizer.json) and makes it the current base: the playground's local policy, and the model
   * of new runs that ask for the default base. A failed import changes nothing.
   */
  async importModel(source: ModelImportSource, onProgress?: (p: DownloadProgress) => void): Promise<ImportedModelInfo> {
    await this.init();
    return this.shelf.importModel(source, this.episodes.size > 0, onProgress);
  }

  /** The imported model, if any (the playground's policy; a run trains it when its config names its base_model), with its card. */
  importedModel(): { name: string; base_model: string; card: string } | null {
    return this.shelf.importedModel();
  }

  /**
   * Base weights with a LoRA adapter folded in (operations/merged-export.ts), as a zip of the Hugging Face layout.
   * The zip is transferred, not copied.
   */
  async mergedModelZip(request: MergeRequest): Promise<Uint8Array> {
    await this.init();
    const base = await this.shelf.mergeBase(request.baseModel);
    try {
      const adapter = readSafetensors(request.adapter, 'adapter_model.safetensors').tensors;
      const zip = zipFiles(
        await mergedModel({ ...base, baseModel: base.baseModel ?? request.baseModel }, adapter, request.peft),
      );
      return Comlink.transfer(zip, [zip.buffer]);
    } finally {
      base.release();
    }
  }

  /** One playground episode in a rollout worker of its own (play-episode.ts), streaming text and steps through `onEvent`. */
  async playEpisode(request: PlayRequest, onEvent: (event: PlayEvent) => unknown): Promise<Trajectory> {
    await this.init();
    return this.episodes.play(request, request.policy === 'expert' ? null : await this.shelf.policy(), onEvent);
  }

  cancelEpisode(episodeId: string): void {
    this.episodes.cancel(episodeId);
  }

  /** Loads a user environment's draft without installing it: its source (named) and what it offers, or its problems and line. */
  loadEnvironment(draft: EnvironmentDraft): Promise<EnvironmentLoad> {
    return this.environments.load(draft);
  }

  /** The Environments screen's live check (sampled tasks, expert and task-blind audit per level), progress through `onProgress`. */
  async checkEnvironment(
    draft: EnvironmentDraft,
    checkId: string,
    onProgress?: (line: string) => unknown,
  ): Promise<EnvironmentCheck> {
    return this.environments.check(draft, checkId, onProgress, await this.checkPolicy());
  }

  /**
   * The policy the check samples: the Playground's local model (the latest run's, an import, or the base),
   * greedy with the default budgets; none when no model can be loaded (the check says nothing about it then).
   */
  private async checkPolicy(): Promise<CheckPolicy | undefined> {
    const status = this.shelf.policyStatus();
    if (status.unavailable) return undefined;
    await this.init();
    const loaded = await this.shelf.policy();
    const { sampling, trajectory_collection: tc } = DEFAULT_CONFIG;
    return {
      policy: new LocalPolicy(loaded.model, loaded.tokenizer),
      items: CHECK_POLICY_ITEMS,
      label: status.label,
      sampling: { temperature: 0, max_new_tokens: sampling.max_new_tokens },
      maxSteps: tc.max_steps_per_trajectory,
    };
  }

  cancelCheck(checkId: string): void {
    this.environments.cancelCheck(checkId);
  }

  /** An imported environment file (a module, or a task file) as a source, checked by building it. */
  readEnvironmentFile(content: Uint8Array | string, fileName: string): Promise<EnvironmentSource> {
    return this.environments.readFile(content, fileName);
  }

  /** Installs saved user environments here, so the playground and runs use them like built-ins. */
  installEnvironments(sources: EnvironmentSource[]): Promise<{ name: string; error: string | null }[]> {
    return this.environments.install(sources);
  }

  /** Every environment the engine knows: the built-ins and the installed user environments. */
  describeEnvironments(): EngineEnvironmentInfo[] {
    return this.environments.describe();
  }

  /** A task of an installed environment (the Playground's tasks of a user environment). */
  generateTask(env: string, seed: number, level: number, split: Split): Task {
    return this.environments.generateTask(env, seed, level, split);
  }

  /** The environment's own score of an episode (the Playground's judging of a user environment). */
  evaluateTrajectory(task: Task, trajectory: Trajectory): Promise<number | null> {
    return this.environments.evaluate(task, trajectory);
  }

  private openStore(): Promise<Store> {
    this.store ??= this.deps.openStore().catch((error: unknown) => {
      this.store = null;
      throw error;
    });
    return this.store;
  }

  /**
   * The GPU went away (driver reset, another tab, the browser reclaiming it): every tensor on it is gone.
   * Switch to wasm, drop the models (they reload on demand), and resume an interrupted run from its
   * last checkpoint, saying all of this through the event stream.
   */
  private async onDeviceLost(reason: string): Promise<void> {
    const interrupted =
      this.runState && ACTIVE.has(this.runState.status) && this.runState.id ? { ...this.runState } : null;
    const runId = interrupted?.id ?? '';
    this.emit({
      type: 'error',
      run_id: runId,
      fatal: false,
      message: `The WebGPU device was lost (${reason}); switching to wasm${interrupted ? ' and resuming the run from its last checkpoint' : ''}.`,
    });
    // The old run's own failure events would only confuse: silence it and let it wind down.
    this.unsubscribeRun?.();
    this.unsubscribeRun = null;
    const old = this.run;
    this.run = null;
    this.runState = null;
    if (old && interrupted)
      await Promise.race([old.stop().catch(() => {}), new Promise((r) => setTimeout(r, LOST_RUN_GRACE_MS))]);
    this.shelf.dropDeviceModels();
    try {
      await this.backend.fallBackToWasm(reason);
    } catch (error) {
      this.emit({
        type: 'error',
        run_id: runId,
        fatal: true,
        message: `The WebGPU device was lost and wasm could not start: ${errorText(error)}`,
      });
      return;
    }
    if (interrupted) {
      await this.start(interrupted.config, { resumeRunId: interrupted.id }).catch((error: unknown) =>
        this.emit({
          type: 'error',
          run_id: runId,
          fatal: true,
          message: `Resuming on wasm after the device loss failed: ${errorText(error)}`,
        }),
      );
    }
  }

  private emit(event: RunEvent): void {
    for (const listener of this.runListeners.values()) listener(event);
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
