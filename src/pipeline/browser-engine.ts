/**
 * The engine: what the engine web worker exposes (workers/engine.worker.ts), built over injected
 * dependencies so Node tests drive the same object with worker_threads and a fake IndexedDB.
 *
 * It owns the tfjs backend and every model: training runs (a PipelineRun whose rollout workers ask it
 * for tokens), the playground's local policy (the model of the latest run, else an imported Hugging
 * Face model, else the shipped base model), and the base weights that merged-weights exports fold a
 * LoRA adapter into. An imported model becomes the current base: new runs that ask for the default
 * base model train it instead (their saved config names it `imported:<name>`).
 * A WebGPU device loss switches to wasm, says so, and resumes an interrupted run from its last
 * checkpoint (every finished trajectory is already in the store).
 *
 * Everything crossing the worker boundary is plain data or a comlink proxy; listeners are kept by
 * numeric id so the caller can drop them without proxying functions back.
 */
import * as Comlink from 'comlink';
import type { RunConfig } from '../config/schema.ts';
import { DEFAULT_CONFIG } from '../config/schema.ts';
import type { SamplingParams, Task, Trajectory } from '../contracts.ts';
import { getEnvironment } from '../envs/registry.ts';
import { checkAdapterTensors, mergedModelFiles, zipFiles, type PeftConfig } from '../export/peft.ts';
import type { BackendChoice } from '../model/backend.ts';
import { ByteTokenizer } from '../model/byte-tokenizer.ts';
import { toHfConfig, type HfConfigJson } from '../model/config.ts';
import { HfTokenizer } from '../model/hf-tokenizer.ts';
import { loadHfModel, urlSource, type FileSource, type LoadedModel } from '../model/hf.ts';
import { readSafetensors } from '../model/safetensors.ts';
import type { TransformerModel } from '../model/transformer.ts';
import { runEpisode } from '../rollout/episode.ts';
import type { EpisodeEvent } from '../rollout/events.ts';
import { LocalPolicy } from '../rollout/local-policy.ts';
import type { TextTokenizer } from '../model/tokenizer.ts';
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

/** How a rollout worker rebuilds the run model's tokenizer (null: the byte tokenizer). */
export interface TokenizerSpec {
  json: object;
  config: Record<string, unknown>;
  eosTokenId: number;
}

/** Where an imported model comes from: an HF folder URL, or the user's files by name (config.json, model.safetensors, …). */
export type ModelImportSource = { url: string } | { files: Record<string, Blob> };

export interface ImportedModelInfo {
  name: string;
  /** What a run config's `model.base_model` says to train it. */
  base_model: string;
  family: string;
  parameters: number;
}

/** Names an imported model in a run config (`model.base_model`). */
export const IMPORTED_PREFIX = 'imported:';

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
  /**
   * A rollout worker; `secrets` are the remote judges' keys (settings `secret.<name>`), `tokenizer`
   * the run model's HF tokenizer (null: the byte tokenizer).
   */
  spawnWorker(index: number, generator: RemoteGenerator, secrets: Record<string, string>, tokenizer: TokenizerSpec | null): WorkerHandle<EpisodeJob, Trajectory>;
  /** The files of an HF folder at `url` (default: plain fetch; the browser also treats an SPA's index.html as absent). */
  urlFiles?(url: string): FileSource;
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

/** A merged-weights export request: the checkpoint's adapter and the base model it was trained on. */
export interface MergeRequest {
  /** `spindle-base`, `imported:<name>` (or the imported model's bare name), or an HF folder URL. */
  baseModel: string;
  /** adapter_model.safetensors bytes (PEFT names). */
  adapter: Uint8Array;
  peft: PeftConfig;
}

interface ImportedModel {
  name: string;
  /** Every file the import read, so each run gets a fresh copy to train (the playground keeps `loaded`). */
  files: Map<string, Uint8Array>;
  loaded: LoadedModel;
}

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
  /** The latest imported Hugging Face model: the current base (playground and new runs). */
  private imported: ImportedModel | null = null;
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
    if (!options.resumeRunId) config = this.withImportedBase(config);
    let tokenizer: TokenizerSpec | null = null;
    const run = new PipelineRun({
      store,
      cores: this.cores,
      backend: backend.backend,
      hangTimeoutMs: this.deps.hangTimeoutMs,
      loadModel: async (cfg) => {
        const loaded = await this.loadRunModel(cfg.model.base_model);
        tokenizer = tokenizerSpec(loaded.tokenizer);
        this.runModel = { ...loaded, label: `the model of run ${cfg.name}` };
        return loaded;
      },
      spawnWorker: (index, generator) => this.deps.spawnWorker(index, generator, secrets, tokenizer),
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
    if (this.imported) return { unavailable: null, label: `the imported model ${this.imported.name}` };
    return { unavailable: this.deps.baseModelMissing(), label: `the base model (${DEFAULT_CONFIG.model.base_model})` };
  }

  /**
   * Loads a Hugging Face-layout model (Llama/Qwen2 config.json, model.safetensors or its index and
   * shards, tokenizer.json) and makes it the current base: the playground's local policy, and the model
   * of new runs that ask for the default base. A failed import changes nothing.
   */
  async importModel(source: ModelImportSource): Promise<ImportedModelInfo> {
    await this.init();
    const from: FileSource = 'url' in source
      ? (this.deps.urlFiles ?? urlSource)(source.url)
      : { description: `the picked files (${Object.keys(source.files).join(', ')})`, read: async (name) => (source.files[name] ? new Uint8Array(await source.files[name].arrayBuffer()) : null) };
    const files = new Map<string, Uint8Array>();
    const loaded = await loadHfModel({
      description: from.description,
      async read(name) {
        const bytes = await from.read(name);
        if (bytes) files.set(name, bytes);
        return bytes;
      },
    });
    const name = importedName(source, loaded.hfConfig);
    // The previous import's tensors go unless an episode is still playing it (then they wait for GC of the tab).
    if (this.episodes.size === 0) this.imported?.loaded.model.dispose();
    this.imported = { name, files, loaded };
    this.runModel = null; // the import is now what the playground plays
    return { name, base_model: IMPORTED_PREFIX + name, family: loaded.config.family, parameters: loaded.model.parameterCount() };
  }

  /** The imported model, if any (what new runs and the playground use). */
  importedModel(): { name: string; base_model: string } | null {
    return this.imported ? { name: this.imported.name, base_model: IMPORTED_PREFIX + this.imported.name } : null;
  }

  /**
   * Base weights with a LoRA adapter folded in, as a zip of the Hugging Face layout (config.json,
   * model.safetensors, and the tokenizer files of an HF-tokenizer model). The zip is transferred, not copied.
   */
  async mergedModelZip(request: MergeRequest): Promise<Uint8Array> {
    await this.init();
    const { model, tokenizer, hfConfig, extra, release } = await this.mergeBase(request.baseModel);
    try {
      const adapter = readSafetensors(request.adapter, 'adapter_model.safetensors').tensors;
      checkAdapterTensors(adapter, request.peft, 'the checkpoint', model.config);
      const config = hfConfig ?? toHfConfig(model.config, {
        eos_token_id: tokenizer.eosId, pad_token_id: tokenizer.padId, ...(tokenizer instanceof ByteTokenizer ? { spindle_tokenizer: 'byte' as const } : {}),
      });
      const zip = zipFiles(mergedModelFiles(await model.getWeights(), adapter, request.peft, config, extra));
      return Comlink.transfer(zip, [zip.buffer]);
    } finally {
      release();
    }
  }

  /** One playground episode with the local policy, streaming text and steps through `onEvent`. */
  async playEpisode(request: PlayRequest, onEvent: (event: PlayEvent) => void): Promise<Trajectory> {
    await this.init();
    const { model, tokenizer } = this.runModel ?? this.imported?.loaded ?? (await this.loadBase());
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

  /** A run's model: a fresh copy of the imported model (training changes it), else the deps' loader. */
  private loadRunModel(baseModel: string): Promise<LoadedPolicyModel> {
    if (!baseModel.startsWith(IMPORTED_PREFIX)) return this.deps.loadModel(baseModel);
    const name = baseModel.slice(IMPORTED_PREFIX.length);
    const imported = this.imported;
    if (imported?.name !== name) {
      throw new Error(`The run's base model "${baseModel}" is not loaded in this tab: import "${name}" again on the Models screen, then start or resume the run.`);
    }
    return loadHfModel({ description: `the imported model ${name}`, read: async (file) => imported.files.get(file) ?? null });
  }

  /** New runs on the default base train the imported model instead, and their saved config says so. */
  private withImportedBase(config: RunConfig): RunConfig {
    if (!this.imported || config.model.base_model !== DEFAULT_CONFIG.model.base_model) return config;
    return { ...config, model: { ...config.model, base_model: IMPORTED_PREFIX + this.imported.name } };
  }

  /** The model whose weights a merge starts from; `release` frees it when it was loaded just for this. */
  private async mergeBase(baseModel: string): Promise<LoadedPolicyModel & { hfConfig: HfConfigJson | null; extra: Record<string, Uint8Array>; release: () => void }> {
    const imported = this.imported;
    if (imported && (baseModel === IMPORTED_PREFIX + imported.name || baseModel === imported.name)) {
      const extra: Record<string, Uint8Array> = {};
      for (const name of ['tokenizer.json', 'tokenizer_config.json']) {
        const bytes = imported.files.get(name);
        if (bytes) extra[name] = bytes;
      }
      return { ...imported.loaded, extra, release: () => {} };
    }
    if (baseModel.startsWith(IMPORTED_PREFIX)) {
      throw new Error(`The adapter was trained on "${baseModel}", which is not loaded in this tab: import it on this screen first, then export again.`);
    }
    const shipped = baseModel === DEFAULT_CONFIG.model.base_model;
    const loaded = shipped ? await this.loadBase() : await this.deps.loadModel(baseModel);
    return { ...loaded, hfConfig: null, extra: hfTokenizerFiles(loaded.tokenizer), release: () => { if (!shipped) loaded.model.dispose(); } };
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

/** A name for an imported model: the repository or folder of a URL, else the config's `_name_or_path`, else the family. */
function importedName(source: ModelImportSource, hfConfig: HfConfigJson): string {
  if ('url' in source) {
    const path = new URL(source.url, 'http://x/').pathname.replace(/\/resolve\/[^/]+\/?$/, '').replace(/\/+$/, '');
    const parts = path.split('/').filter(Boolean);
    const name = (source.url.includes('huggingface.co') ? parts.slice(-2) : parts.slice(-1)).join('/');
    if (name) return name;
  }
  const named = hfConfig._name_or_path;
  return typeof named === 'string' && named.trim() ? named.trim() : `${hfConfig.model_type ?? 'model'}-${hfConfig.hidden_size ?? ''}x${hfConfig.num_hidden_layers ?? ''}`;
}

function tokenizerSpec(tokenizer: TextTokenizer): TokenizerSpec | null {
  return tokenizer instanceof HfTokenizer ? { json: tokenizer.json, config: tokenizer.configJson, eosTokenId: tokenizer.eosId } : null;
}

function hfTokenizerFiles(tokenizer: TextTokenizer): Record<string, Uint8Array> {
  if (!(tokenizer instanceof HfTokenizer)) return {};
  const encoder = new TextEncoder();
  return { 'tokenizer.json': encoder.encode(JSON.stringify(tokenizer.json)), 'tokenizer_config.json': encoder.encode(JSON.stringify(tokenizer.configJson)) };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
