/**
 * The engine: what the engine web worker exposes (workers/engine.worker.ts), built over injected
 * dependencies so Node tests drive the same object with worker_threads and a fake IndexedDB.
 *
 * It owns the tfjs backend and every model: training runs (a PipelineRun whose rollout workers ask it
 * for tokens), and the playground's local policy (the model of the latest run, else the base model).
 * A WebGPU device loss switches to wasm, says so, and resumes an interrupted run from its last
 * checkpoint (every finished trajectory is already in the store).
 *
 * Everything crossing the worker boundary is plain data or a comlink proxy; listeners are kept by
 * numeric id so the caller can drop them without proxying functions back.
 */
import type { RunConfig } from '../config/schema.ts';
import { DEFAULT_CONFIG } from '../config/schema.ts';
import type { SamplingParams, Task, Trajectory } from '../contracts.ts';
import { getEnvironment } from '../envs/registry.ts';
import type { BackendChoice } from '../model/backend.ts';
import type { TransformerModel } from '../model/transformer.ts';
import { runEpisode } from '../rollout/episode.ts';
import type { EpisodeEvent } from '../rollout/events.ts';
import { LocalPolicy } from '../rollout/local-policy.ts';
import type { TextTokenizer } from '../rollout/policy.ts';
import type { Store } from '../store/index.ts';
import type { RunEvent, RunListener } from './events.ts';
import { readSecrets } from './secrets.ts';
import type { RemoteGenerator } from './generation.ts';
import type { EpisodeJob } from './rollout-worker.ts';
import { PipelineRun } from './run.ts';
import type { WorkerHandle } from './worker-pool.ts';

export interface LoadedPolicyModel {
  model: TransformerModel;
  tokenizer: TextTokenizer;
}

export interface EngineDeps {
  /** Starts the tfjs backend (`forced` as in `?backend=`; wasm threads from `cores`); again with 'wasm' after a device loss. */
  initBackend(forced: string | null, cores: number): Promise<BackendChoice>;
  /** Resolves with a reason when the current backend's device is lost; null when it cannot be (wasm, cpu). */
  deviceLost(): Promise<string> | null;
  openStore(): Promise<Store>;
  /** Loads a run config's `model.base_model`. */
  loadModel(baseModel: string): Promise<LoadedPolicyModel>;
  /** Why the default base model cannot be loaded, or null when it can. */
  baseModelMissing(): string | null;
  /** A rollout worker; `secrets` are the remote judges' keys (settings `secret.<name>`). */
  spawnWorker(index: number, generator: RemoteGenerator, secrets: Record<string, string>): WorkerHandle<EpisodeJob, Trajectory>;
  cores: number;
  /** Marks a run as live in this tab until the returned release is called (Web Locks), so other tabs do not offer to resume it. */
  lockRun?(runId: string): () => void;
  /** Per-episode hang deadline for the rollout pool (tests shorten it). */
  hangTimeoutMs?: number;
}

export interface PolicyStatus {
  /** Null when the local policy can run now, else why not. */
  unavailable: string | null;
  /** What the local policy is: the latest run's model or the base model. */
  label: string;
}

export interface PlayRequest {
  /** Chosen by the caller, so it can `cancelEpisode` it. */
  episodeId: string;
  task: Task;
  seed: number;
  sampling?: SamplingParams;
  maxSteps?: number;
  runId?: string | null;
  groupId?: string;
}

/** The episode events the playground draws (the final trajectory comes back as the call's result). */
export type PlayEvent = Extract<EpisodeEvent, { type: 'text' | 'tool_call' | 'tool_result' }>;

/** Statuses in which a run is interrupted by a device loss (and, with 'stopping', blocks a new start). */
const ACTIVE = new Set(['starting', 'running', 'paused']);
/** How long a run on a lost device gets to wind down before it is abandoned. */
const LOST_RUN_GRACE_MS = 20_000;

export class Engine {
  private backend: BackendChoice | null = null;
  private initializing: Promise<BackendChoice> | null = null;
  private readonly backendListeners = new Map<number, (choice: BackendChoice) => void>();
  private readonly runListeners = new Map<number, RunListener>();
  private nextId = 1;
  private store: Promise<Store> | null = null;
  private run: PipelineRun | null = null;
  private unsubscribeRun: (() => void) | null = null;
  private runState: { id: string; config: RunConfig; status: string } | null = null;
  /** The model of the latest run (the policy being trained), used by the playground. */
  private runModel: (LoadedPolicyModel & { label: string }) | null = null;
  private baseModel: Promise<LoadedPolicyModel> | null = null;
  private readonly episodes = new Map<string, AbortController>();
  private cores: number;

  constructor(private readonly deps: EngineDeps) {
    this.cores = deps.cores;
  }

  /**
   * Starts the backend once (later calls return the same choice). `cores` is the page's
   * navigator.hardwareConcurrency: the default rollout pool size, and half of it the wasm threads.
   */
  init(options: { forced?: string | null; cores?: number } = {}): Promise<BackendChoice> {
    if (options.cores) this.cores = options.cores;
    this.initializing ??= this.deps.initBackend(options.forced ?? null, this.cores).then((choice) => {
      this.setBackend(choice);
      return choice;
    });
    return this.initializing;
  }

  backendInfo(): BackendChoice | null {
    return this.backend;
  }

  /** `listener` hears the current backend now and every change later; returns an id for `unwatchBackend`. */
  watchBackend(listener: (choice: BackendChoice) => void): number {
    const id = this.nextId++;
    this.backendListeners.set(id, listener);
    if (this.backend) listener(this.backend);
    return id;
  }

  unwatchBackend(id: number): void {
    this.backendListeners.delete(id);
  }

  subscribe(listener: RunListener): number {
    const id = this.nextId++;
    this.runListeners.set(id, listener);
    return id;
  }

  unsubscribe(id: number): void {
    this.runListeners.delete(id);
  }

  async start(config: RunConfig, options: { resumeRunId?: string } = {}): Promise<string> {
    if (this.runState && (ACTIVE.has(this.runState.status) || this.runState.status === 'stopping')) throw new Error('A run is already going in this tab; stop it before starting another.');
    await this.init();
    let backend = this.backend!; // the current one: after a device loss, no longer the first
    const wanted = config.model.backend;
    if (wanted !== 'auto' && wanted !== backend.backend) {
      backend = await this.deps.initBackend(wanted, this.cores);
      this.setBackend(backend);
      this.baseModel = null;
    }
    const store = await this.openStore();
    const secrets = await readSecrets(store);
    const run = new PipelineRun({
      store,
      cores: this.cores,
      backend: backend.backend,
      hangTimeoutMs: this.deps.hangTimeoutMs,
      loadModel: async (cfg) => {
        const loaded = await this.deps.loadModel(cfg.model.base_model);
        this.runModel = { ...loaded, label: `the model of run ${cfg.name}` };
        return loaded;
      },
      spawnWorker: (index, generator) => this.deps.spawnWorker(index, generator, secrets),
    });
    this.unsubscribeRun?.();
    this.run = run;
    this.runState = { id: '', config, status: 'starting' };
    const state = this.runState;
    let release: (() => void) | null = null;
    this.unsubscribeRun = run.subscribe((event) => {
      if (event.type === 'status') state.status = event.status;
      if (event.run_id) state.id = event.run_id;
      if (event.type === 'status' && !ACTIVE.has(event.status) && event.status !== 'stopping') release?.();
      this.emit(event);
    });
    try {
      const id = await run.start(config, options);
      state.id = id;
      if (ACTIVE.has(state.status)) release = this.deps.lockRun?.(id) ?? null;
      return id;
    } catch (error) {
      state.status = 'error';
      throw error;
    }
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
    if (this.runModel) return { unavailable: null, label: this.runModel.label };
    return { unavailable: this.deps.baseModelMissing(), label: `the base model (${DEFAULT_CONFIG.model.base_model})` };
  }

  /** One playground episode with the local policy, streaming text and steps through `onEvent`. */
  async playEpisode(request: PlayRequest, onEvent: (event: PlayEvent) => void): Promise<Trajectory> {
    await this.init();
    const { model, tokenizer } = this.runModel ?? (await this.loadBase());
    const controller = new AbortController();
    this.episodes.set(request.episodeId, controller);
    try {
      return await runEpisode({
        policy: new LocalPolicy(model, tokenizer, { id: 'local' }),
        env: getEnvironment(request.task.env), task: request.task, seed: request.seed,
        sampling: request.sampling, maxSteps: request.maxSteps, runId: request.runId ?? null,
        groupId: request.groupId, signal: controller.signal,
        onEvent: (event) => {
          if (event.type === 'text' || event.type === 'tool_call' || event.type === 'tool_result') onEvent(event);
        },
      });
    } finally {
      this.episodes.delete(request.episodeId);
    }
  }

  cancelEpisode(episodeId: string): void {
    this.episodes.get(episodeId)?.abort(new DOMException('The episode was cancelled.', 'AbortError'));
  }

  private loadBase(): Promise<LoadedPolicyModel> {
    this.baseModel ??= this.deps.loadModel(DEFAULT_CONFIG.model.base_model).catch((error: unknown) => {
      this.baseModel = null;
      throw error;
    });
    return this.baseModel;
  }

  private openStore(): Promise<Store> {
    this.store ??= this.deps.openStore().catch((error: unknown) => {
      this.store = null;
      throw error;
    });
    return this.store;
  }

  private setBackend(choice: BackendChoice): void {
    this.backend = choice;
    for (const listener of this.backendListeners.values()) listener(choice);
    const lost = this.deps.deviceLost();
    if (lost) void lost.then((reason) => this.onDeviceLost(choice, reason));
  }

  /**
   * The GPU went away (driver reset, another tab, the browser reclaiming it): every tensor on it is gone.
   * Switch to wasm, drop the models (they reload on demand), and resume an interrupted run from its
   * last checkpoint, saying all of this through the event stream.
   */
  private async onDeviceLost(lostChoice: BackendChoice, reason: string): Promise<void> {
    if (this.backend !== lostChoice) return; // an old device, replaced already
    const interrupted = this.runState && ACTIVE.has(this.runState.status) && this.runState.id ? { ...this.runState } : null;
    const runId = interrupted?.id ?? '';
    this.emit({
      type: 'error', run_id: runId, fatal: false,
      message: `The WebGPU device was lost (${reason}); switching to wasm${interrupted ? ' and resuming the run from its last checkpoint' : ''}.`,
    });
    // The old run's own failure events would only confuse: silence it and let it wind down.
    this.unsubscribeRun?.();
    this.unsubscribeRun = null;
    const old = this.run;
    this.run = null;
    this.runState = null;
    if (old && interrupted) await Promise.race([old.stop().catch(() => {}), new Promise((r) => setTimeout(r, LOST_RUN_GRACE_MS))]);
    this.runModel = null;
    this.baseModel = null;
    try {
      const wasm = await this.deps.initBackend('wasm', this.cores);
      this.setBackend({ ...wasm, reason: `WebGPU device lost (${reason}); ${wasm.reason}` });
    } catch (error) {
      this.emit({ type: 'error', run_id: runId, fatal: true, message: `The WebGPU device was lost and wasm could not start: ${errorText(error)}` });
      return;
    }
    if (interrupted) {
      await this.start(interrupted.config, { resumeRunId: interrupted.id }).catch((error: unknown) =>
        this.emit({ type: 'error', run_id: runId, fatal: true, message: `Resuming on wasm after the device loss failed: ${errorText(error)}` }));
    }
  }

  private emit(event: RunEvent): void {
    for (const listener of this.runListeners.values()) listener(event);
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
