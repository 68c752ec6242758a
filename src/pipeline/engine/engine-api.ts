/**
 * The engine's interface types: what it is built from (EngineDeps) and the plain data its calls take,
 * shared by the engine (browser-engine.ts), its browser wiring (platform/browser.ts) and the page.
 */
import type { SamplingParams, Task } from '../../contracts.ts';
import type { PeftConfig } from '../../export/peft.ts';
import type { FileSource } from '../../hub/hf-layout.ts';
import type { DownloadCache } from '../../hub/hub.ts';
import type { TextTokenizer } from '../../tokenizer/tokenizer.ts';
import type { TransformerModel } from '../../model/transformer.ts';
import type { EpisodeEvent } from '../../rollout/events.ts';
import type { Store } from '../../store/index.ts';
import type { BackendDeps } from './backend-supervisor.ts';
import type { RemoteGenerator } from './generation.ts';
import type { RolloutWorker } from './rollout-protocol.ts';

export type { BackendChoice } from '../../kernels/backend.ts';

/** How a rollout worker rebuilds the run model's tokenizer (null: the byte tokenizer). */
export interface TokenizerSpec {
  json: object;
  config: Record<string, unknown>;
  /** The end-of-sequence id first, then the model's other stop ids (HfTokenizer.stopIds), as config.json lists them. */
  eosTokenId: number[];
}

/** A policy model with the tokenizer it samples with, as the engine loads one (model-shelf.ts keeps them). */
export interface LoadedPolicyModel {
  model: TransformerModel;
  tokenizer: TextTokenizer;
}

export interface EngineDeps extends BackendDeps {
  openStore(): Promise<Store>;
  /** Loads a run config's `model.base_model`. */
  /** `quantization`: the run config's model.quantization (int8 quantizes the base as it loads). */
  loadModel(baseModel: string, options?: { quantization?: 'none' | 'int8' }): Promise<LoadedPolicyModel>;
  /** Why the default base model cannot be loaded, or null when it can. */
  baseModelMissing(): string | null;
  /**
   * A rollout worker; `secrets` are the remote judges' keys (settings `secret.<name>`), `tokenizer`
   * the run model's HF tokenizer (null: the byte tokenizer).
   */
  spawnWorker(
    index: number,
    generator: RemoteGenerator,
    secrets: Record<string, string>,
    tokenizer: TokenizerSpec | null,
  ): RolloutWorker;
  /** The files of an HF folder at `url` (default: plain fetch; the browser also treats an SPA's index.html as absent). */
  urlFiles?(url: string): FileSource;
  /** Where hub downloads are kept between visits (the browser: Cache Storage); none: download every time. */
  hubCache?(): DownloadCache | null;
  cores: number;
  /** Marks a run as live in this tab until the returned release is called (Web Locks), so other tabs do not offer to resume it. */
  lockRun?(runId: string): () => void;
  /** How long a rollout worker may make no progress of its own (time waiting on the engine's tokens does not count) before it is replaced (tests shorten it). */
  hangTimeoutMs?: number;
}

export interface PlayRequest {
  /** Chosen by the caller, so it can `cancelEpisode` it; also the trajectory's id. */
  episodeId: string;
  /** `local`: the engine's local policy model; `expert`: the environment's scripted expert. */
  policy: 'local' | 'expert';
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
