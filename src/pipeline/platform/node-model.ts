/**
 * The Node platform's model loading (CLI, benchmarks): a policy model from a Hugging Face layout folder,
 * a hub id or an https URL (downloads cached on disk, resumable, stoppable), on the tfjs backend the
 * config names, started once per process; and a PEFT adapter put on top of it, from a zip or from a
 * checkpoint's tensors. Here, not in the CLI, so commands only say where the files are and
 * how to show progress; every failure is one sentence naming the model or the adapter.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_CONFIG, type RunConfig } from '../../config/schema.ts';
import { readAdapter, type PeftConfig } from '../../export/peft.ts';
import { initBackend, type BackendChoice } from '../../kernels/backend.ts';
import { loadHfModel, type LoadedModel } from '../../hub/hf.ts';
import { HfTokenizer } from '../../tokenizer/hf-tokenizer.ts';
import { diskCache } from '../../hub/hub.ts';
import { attachLora, importLora } from '../../model/lora.ts';
import type { HostTensors } from '../../model/transformer.ts';
import { chatFormatSummary } from '../../format/conversation.ts';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** `spindle-base` and other bare names resolve to the shipped `models/` folder; anything else is a path or URL. */
export function resolveModelPath(name: string): string {
  return /^[\w.-]+$/.test(name) ? resolve(REPO, 'models', name) : name;
}

/** A loaded policy model with its tokenizer and its own config.json (a merged export keeps it). */
export type NodeModel = LoadedModel;

/** A model named by hub id or URL: downloaded (and cached) rather than read from a folder. */
export function isRemoteModel(name: string): boolean {
  return /^(hf:|https?:\/\/)/.test(name);
}

export interface NodeModelOptions {
  /** The run config whose `model.backend` picks the tfjs backend (the first load in a process decides). */
  config?: RunConfig;
  /** Hub downloads: a mirror or test server, the cache folder, a stop signal (keeps what arrived), progress per file. */
  hub?: {
    endpoint?: string;
    cacheDir: string;
    signal?: AbortSignal;
    onProgress?: (p: { file: string; loaded: number; total: number | null }) => void;
  };
  /** Told which chat template and call format a Hugging Face tokenizer runs in (or that it has none). */
  onChatFormat?: (summary: string) => void;
}

let backend: Promise<BackendChoice> | null = null;

/** Starts the tfjs backend once per process (Node: wasm unless the config forces another). */
function ensureBackend(config: RunConfig): Promise<BackendChoice> {
  backend ??= initBackend({ forced: config.model.backend === 'auto' ? null : config.model.backend });
  return backend;
}

/** Loads the model at `dir` (a folder, `hf:owner/name[@rev]` or an https URL); throws a sentence that says what to do. */
export async function loadPolicyModel(dir: string, options: NodeModelOptions = {}): Promise<NodeModel> {
  if (!isRemoteModel(dir) && !existsSync(join(dir, 'config.json'))) {
    const shipped = dir === resolveModelPath('spindle-base');
    throw new Error(
      shipped
        ? `The shipped model is not in ${dir} yet (build it with \`npm run model:base\`), or pass --model DIR.`
        : `${dir} is not a model folder (no config.json); pass --model with a Hugging Face layout folder.`,
    );
  }
  await ensureBackend(options.config ?? DEFAULT_CONFIG);
  const hub = options.hub;
  let loaded: LoadedModel;
  try {
    // A run's base in int8 quantizes as it loads (its float32 copy never sits on the heap).
    const quantization = options.config?.model.quantization;
    loaded = await loadHfModel(dir, {
      ...(hub
        ? {
            hub: {
              endpoint: hub.endpoint,
              cache: diskCache(hub.cacheDir),
              signal: hub.signal,
              onProgress: hub.onProgress,
            },
          }
        : {}),
      quantization,
    });
  } catch (e) {
    throw new Error(`cannot load the model from ${dir}: ${(e as Error).message}`, { cause: e });
  }
  if (loaded.tokenizer instanceof HfTokenizer) options.onChatFormat?.(chatFormatSummary(loaded.tokenizer));
  return loaded;
}

/** Attaches a PEFT adapter zip to a plain model (layers the adapter lacks get none); returns its config. */
export function attachAdapterZip(loaded: NodeModel, bytes: Uint8Array, label: string): PeftConfig {
  const adapter = readAdapter(bytes, label, { modelConfig: loaded.config });
  attachAdapterTensors(loaded, adapter.config, adapter.tensors, label);
  return adapter.config;
}

/** Attaches LoRA adapters shaped like `config` to the layers the tensors cover, and loads them. */
export function attachAdapterTensors(loaded: NodeModel, config: PeftConfig, tensors: HostTensors, label: string): void {
  const layers = new Set([...tensors.keys()].map((k) => Number(/layers\.(\d+)\./.exec(k)![1])));
  const without = loaded.model.layers.map((_, i) => i).filter((i) => !layers.has(i));
  attachLora(loaded.model, {
    r: config.r,
    alpha: config.lora_alpha,
    dropout: 0,
    targetModules: config.target_modules,
    freezeLayers: without.length ? without.join(',') : null,
  });
  try {
    importLora(loaded.model, tensors);
  } catch (e) {
    throw new Error(`${label}: ${(e as Error).message}`, { cause: e });
  }
}
