/**
 * The engine's models, and which one each use gets:
 * - the playground's local policy: the model of the latest run, else the imported Hugging Face model,
 *   else the shipped base model (one order, `policy()`, which `policyStatus()` describes);
 * - a run: a fresh copy of the imported model when its config names `imported:<name>` (the import's own
 *   tensors are then freed: one copy of the weights per tab; its files bring them back when needed), else
 *   the loader; the previous run's model is freed;
 * - a merged-weights export: the base the adapter was trained on.
 * A run trains the imported model only when its config names it (`model.base_model: imported:<name>` or
 * the hub id): the user chooses it on the Train screen; it never replaces the configured base silently.
 */
import type { RunConfig } from '../../config/schema.ts';
import { DEFAULT_CONFIG } from '../../config/schema.ts';
import type { HfConfigJson } from '../../model/config.ts';
import type { FileSource } from '../../hub/hf-layout.ts';
import { loadHfModel, urlSource, type LoadedModel } from '../../hub/hf.ts';
import {
  hubRefText,
  hubSource,
  parseHubRef,
  type DownloadProgress,
  type HubOptions,
  type HubRef,
} from '../../hub/hub.ts';
import type { LoadedPolicyModel } from './engine-api.ts';
import { importedModelCard } from './imported-card.ts';
import type { MergeSource } from '../operations/merged-export.ts';
import { TOKENIZER_FILES } from '../../hub/hf-layout.ts';

/**
 * Where an imported model comes from: a hub id (`owner/name`, `hf:owner/name@revision`), an HF folder
 * URL, or the user's files by name (config.json, model.safetensors, …).
 */
export type ModelImportSource = { hub: string } | { url: string } | { files: Record<string, Blob> };

export interface ImportedModelInfo {
  name: string;
  /** What a run config's `model.base_model` says to train it. */
  base_model: string;
  family: string;
  parameters: number;
  /** Markdown for the Models screen (imported-card.ts). */
  card: string;
}

export interface PolicyStatus {
  /** Null when the local policy can run now, else why not. */
  unavailable: string | null;
  /** What the local policy is: the latest run's model, the imported model or the base model. */
  label: string;
  /** The same, short enough for a picker's option: "spindle-base", "run chain-calls", the import's name. */
  name: string;
}

/** The model a merge starts from; `release` frees it when it was loaded just for this. */
export interface MergeBase extends MergeSource {
  release(): void;
}

/** Names an imported model in a run config (`model.base_model`). */
const IMPORTED_PREFIX = 'imported:';

interface ImportedModel {
  name: string;
  /** What run configs call it: `hf:owner/name[@revision]` for a hub model (adapters then name the real base), else `imported:<name>`. */
  baseModel: string;
  /** Every file the import read, so each run gets a fresh copy to train (the playground keeps `loaded`). */
  files: Map<string, Uint8Array>;
  /** How its base is held: int8 when float32 did not fit the backend's memory. */
  quantization: 'none' | 'int8';
  /** Its tensors; null while a run on it holds the tab's copy (reloaded from `files` when needed again). */
  loaded: Promise<LoadedModel> | null;
  card: string;
}

export interface ShelfDeps {
  /** Loads a run config's `model.base_model` (its base in int8 when `quantization` says so). */
  loadModel(baseModel: string, options?: { quantization?: 'none' | 'int8' }): Promise<LoadedPolicyModel>;
  /** Why the default base model cannot be loaded, or null when it can. */
  baseModelMissing(): string | null;
  /** The files of an HF folder at `url` (default: plain fetch). */
  urlFiles?(url: string): FileSource;
  /** Hub downloads: where files are cached (the browser's Cache Storage), and the endpoint (tests serve one on 127.0.0.1). */
  hub?: () => Pick<HubOptions, 'cache' | 'endpoint'>;
  /** Memory the backend can give a model (the wasm heap), or undefined when it has no fixed cap: imports beyond it are refused before their weights are read. */
  memoryLimitBytes?: () => number | undefined;
}

export class ModelShelf {
  /** The model of the latest run (the policy being trained). */
  private runModel: (LoadedPolicyModel & { label: string; name: string }) | null = null;
  private baseModel: Promise<LoadedPolicyModel> | null = null;
  private imported: ImportedModel | null = null;

  constructor(private readonly deps: ShelfDeps) {}

  /** The playground's local policy model. */
  async policy(): Promise<LoadedPolicyModel> {
    return this.runModel ?? (this.imported ? this.importedTensors(this.imported) : this.loadBase());
  }

  policyStatus(): PolicyStatus {
    if (this.runModel) return { unavailable: null, label: this.runModel.label, name: this.runModel.name };
    if (this.imported)
      return { unavailable: null, label: `the imported model ${this.imported.name}`, name: this.imported.name };
    const base = DEFAULT_CONFIG.model.base_model;
    return { unavailable: this.deps.baseModelMissing(), label: `the base model (${base})`, name: base };
  }

  /**
   * A run's model: a fresh copy of the imported model (training changes it), else the loader. It becomes the
   * policy, and the previous run's model is freed unless an episode still plays it (`inUse`): each run used to
   * keep its copy of the weights, and the tab grew by a model per run.
   */
  async loadForRun(config: RunConfig, inUse = false): Promise<LoadedPolicyModel> {
    const loaded = await this.loadRunModel(config.model.base_model, config.model.quantization);
    const previous = this.runModel;
    const importedModel = this.imported?.loaded ? (await this.imported.loaded).model : null;
    if (previous && !inUse && previous.model !== importedModel && previous.model !== loaded.model)
      previous.model.dispose();
    // A run on the imported model trains its own copy, which is now the policy: the import's tensors are freed
    // (one copy of the weights per tab) and read again from its files only if a merge or the playground needs them.
    if (this.imported?.baseModel === config.model.base_model && importedModel && !inUse) {
      importedModel.dispose();
      this.imported.loaded = null;
    }
    this.runModel = { ...loaded, label: `the model of run ${config.name}`, name: `run ${config.name}` };
    return loaded;
  }

  /**
   * Loads a Hugging Face-layout model and makes it the playground's policy (and a base runs can name). The previous import's tensors are
   * freed unless `inUse` (an episode still plays it; then they wait for the tab's GC). A failed import changes nothing.
   */
  async importModel(
    source: ModelImportSource,
    inUse: boolean,
    onProgress?: (p: DownloadProgress) => void,
  ): Promise<ImportedModelInfo> {
    const ref = 'hub' in source ? hubRefOf(source.hub) : null;
    const from = ref ? hubSource(ref, { ...this.deps.hub?.(), onProgress }) : this.folderOf(source);
    const files = new Map<string, Uint8Array>();
    const loaded = await loadHfModel(
      {
        description: from.description,
        async read(name) {
          const bytes = await from.read(name);
          if (bytes) files.set(name, bytes);
          return bytes;
        },
      },
      { memoryLimitBytes: this.deps.memoryLimitBytes?.(), quantization: 'auto' },
    ); // a base too large in float32 comes in int8
    const name = ref ? ref.id : importedName(source, loaded.hfConfig);
    const baseModel = ref ? hubRefText(ref) : IMPORTED_PREFIX + name;
    const readme = await optionalText(from, 'README.md');
    const card = importedModelCard(name, baseModel, loaded, readme);
    if (!inUse && this.imported?.loaded) (await this.imported.loaded).model.dispose();
    this.imported = {
      name,
      baseModel,
      files,
      quantization: loaded.linearPrecision === 'int8' ? 'int8' : 'none',
      loaded: Promise.resolve(loaded),
      card,
    };
    this.runModel = null; // the import is now what the playground plays
    return {
      name,
      base_model: baseModel,
      family: loaded.config.family,
      parameters: loaded.model.parameterCount(),
      card,
    };
  }

  /** The files of a URL or picked-files import. */
  private folderOf(source: ModelImportSource): FileSource {
    if ('url' in source) return (this.deps.urlFiles ?? urlSource)(source.url);
    if (!('files' in source)) throw new Error('a hub import has no folder');
    const picked = source.files;
    return {
      description: `the picked files (${Object.keys(picked).join(', ')})`,
      read: async (name) => (picked[name] ? new Uint8Array(await picked[name].arrayBuffer()) : null),
    };
  }

  importedModel(): { name: string; base_model: string; card: string } | null {
    return this.imported
      ? { name: this.imported.name, base_model: this.imported.baseModel, card: this.imported.card }
      : null;
  }

  /** The base weights a merged export folds an adapter trained on `baseModel` into. */
  async mergeBase(baseModel: string): Promise<MergeBase> {
    const imported = this.imported;
    if (imported && (baseModel === imported.baseModel || baseModel === imported.name)) {
      const tokenizerFiles: Record<string, Uint8Array> = {};
      // Every tokenizer file the import had, its chat_template.jinja included: the merged model chats as the base did.
      for (const name of TOKENIZER_FILES) {
        const bytes = imported.files.get(name);
        if (bytes) tokenizerFiles[name] = bytes;
      }
      // An import without them (the byte tokenizer's marker in config.json) gets them written, as any merge does.
      // Named as imported: its hub ref, or the name of its folder or files.
      const named = imported.baseModel.startsWith(IMPORTED_PREFIX) ? imported.name : imported.baseModel;
      const files = Object.keys(tokenizerFiles).length ? tokenizerFiles : null;
      return { ...(await this.importedTensors(imported)), tokenizerFiles: files, baseModel: named, release: () => {} };
    }
    if (baseModel.startsWith(IMPORTED_PREFIX)) {
      throw new Error(
        `The adapter was trained on "${baseModel}", which is not loaded in this tab: import it on this screen first, then export again.`,
      );
    }
    const shipped = baseModel === DEFAULT_CONFIG.model.base_model;
    const loaded = shipped ? await this.loadBase() : await this.deps.loadModel(baseModel);
    return {
      ...loaded,
      release: () => {
        if (!shipped) loaded.model.dispose();
      },
    };
  }

  /** Forgets the models on a lost device (they reload on demand); the import's files stay, its tensors are gone with the device. */
  dropDeviceModels(): void {
    this.runModel = null;
    this.baseModel = null;
  }

  /** The imported model's tensors, read again from its files when a run freed them. */
  private importedTensors(imported: ImportedModel): Promise<LoadedModel> {
    imported.loaded ??= this.readImported(imported).catch((error: unknown) => {
      imported.loaded = null;
      throw error;
    });
    return imported.loaded;
  }

  /** The import from its files: as it was imported (float32 or, when that did not fit, int8), or as a run's config asks. */
  private readImported(
    imported: ImportedModel,
    quantization: 'none' | 'int8' = imported.quantization,
  ): Promise<LoadedModel> {
    return loadHfModel(
      { description: `the imported model ${imported.name}`, read: async (file) => imported.files.get(file) ?? null },
      { quantization, memoryLimitBytes: this.deps.memoryLimitBytes?.() },
    );
  }

  private loadBase(): Promise<LoadedPolicyModel> {
    this.baseModel ??= this.deps.loadModel(DEFAULT_CONFIG.model.base_model).catch((error: unknown) => {
      this.baseModel = null;
      throw error;
    });
    return this.baseModel;
  }

  private loadRunModel(baseModel: string, quantization: 'none' | 'int8'): Promise<LoadedPolicyModel> {
    const imported = this.imported;
    if (imported?.baseModel === baseModel) return this.readImported(imported, quantization);
    if (baseModel.startsWith(IMPORTED_PREFIX) || baseModel.startsWith('hf:')) {
      const name = baseModel.startsWith('hf:') ? baseModel : baseModel.slice(IMPORTED_PREFIX.length);
      throw new Error(
        `The run's base model "${baseModel}" is not loaded in this tab: import "${name}" again on the Models screen, then start or resume the run.`,
      );
    }
    return this.deps.loadModel(baseModel, { quantization });
  }
}

/** A hub model as the user typed it: `owner/name`, `owner/name@revision` or `hf:…`; anything else is refused by name. */
function hubRefOf(text: string): HubRef {
  const trimmed = text.trim();
  let ref: HubRef | null = null;
  try {
    ref = parseHubRef(trimmed.startsWith('hf:') ? trimmed : `hf:${trimmed}`);
  } catch {
    // parseHubRef names the hf: form; the Models field takes the bare id, so say that instead.
  }
  if (!ref) throw new Error(`"${text}" is not a Hugging Face model id; expected owner/name or owner/name@revision.`);
  return ref;
}

/** A name for an imported model: the repository or folder of a URL, else the config's `_name_or_path`, else the family. */
/** A text file the model may lack (a README.md): null when it is missing or cannot be read. */
async function optionalText(from: FileSource, name: string): Promise<string | null> {
  try {
    const bytes = await from.read(name);
    return bytes ? new TextDecoder().decode(bytes) : null;
  } catch {
    return null;
  }
}

function importedName(source: ModelImportSource, hfConfig: HfConfigJson): string {
  if ('url' in source) {
    const path = new URL(source.url, 'http://x/').pathname.replace(/\/resolve\/[^/]+\/?$/, '').replace(/\/+$/, '');
    const parts = path.split('/').filter(Boolean);
    const name = (source.url.includes('huggingface.co') ? parts.slice(-2) : parts.slice(-1)).join('/');
    if (name) return name;
  }
  const named = hfConfig._name_or_path;
  return typeof named === 'string' && named.trim()
    ? named.trim()
    : `${hfConfig.model_type ?? 'model'}-${hfConfig.hidden_size ?? ''}x${hfConfig.num_hidden_layers ?? ''}`;
}
