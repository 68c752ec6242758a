/**
 * Models in Hugging Face layout: `config.json` + `model.safetensors` (or shards listed in
 * `model.safetensors.index.json`) + `tokenizer.json` (with `tokenizer_config.json` and the chat template
 * in `chat_template.jinja` when present), for Llama/Qwen2-family checkpoints — loaded
 * from a URL (fetch), files the user picked (File/Blob), or a directory in Node. Spindle saves its
 * own models (checkpoints, the shipped `models/`) the same way; a byte-tokenizer model says
 * `"spindle_tokenizer": "byte"` in its config.json and carries an equivalent tokenizer.json for transformers.
 *
 * Errors name the file, tensor or field and what was expected.
 */
import type { TextTokenizer } from '../tokenizer/tokenizer.ts';
import { ByteTokenizer } from '../tokenizer/byte-tokenizer.ts';
import { byteTokenizerConfig, byteTokenizerJson } from '../tokenizer/byte-tokenizer-json.ts';
import { fromHfConfig, toHfConfig, type HfConfigJson, type ModelConfig } from '../model/config.ts';
import { DECODE_STEP_KERNEL, HALF_MATMUL_KERNEL, hasFusedKernel } from '../kernels/fused.ts';
import type { HalfFormat } from '../kernels/half.ts';
import { checkWeights, type FileSource } from './hf-layout.ts';
import { CHAT_TEMPLATE_FILE, HfTokenizer, withChatTemplate } from '../tokenizer/hf-tokenizer.ts';
import { hubSource, parseHubRef, type HubOptions, type HubRef } from './hub.ts';
import { DEFAULT_LIMITS, sizeLimitFor, type TransferLimits } from './hub-transfer.ts';
import { fetchWithTimeout, readBytes } from '../net.ts';
import { assertFits, estimateMemory, IMPORT_CHECK_TOKENS, neededBytes } from '../model/memory.ts';
import { assertFiniteTensors, readSafetensors, writeSafetensors } from './safetensors.ts';
import { TransformerModel, type HostTensors } from '../model/transformer.ts';

/**
 * A model at a plain URL (not the hub: no cache, no checksums to check). Each file is read with the
 * network bounds (src/net.ts): a connect and an idle timeout, and a size limit that fits the file (a
 * config is small, weights are not), so a server that hangs, drips or sends gigabytes fails with a
 * message naming the URL instead of holding the page or the CLI.
 */
export function urlSource(
  base: string,
  fetchImpl: typeof fetch = fetch,
  limits: TransferLimits = DEFAULT_LIMITS,
): FileSource {
  const root = base.endsWith('/') ? base : `${base}/`;
  return {
    description: root,
    async read(name) {
      const url = root + name;
      const { response, controller } = await fetchWithTimeout(fetchImpl, url, {}, limits.connectTimeoutMs);
      if (response.status === 404) {
        controller.abort();
        return null;
      }
      if (!response.ok) {
        controller.abort();
        throw new Error(`GET ${url} failed: HTTP ${response.status} ${response.statusText}`);
      }
      return readBytes(response, controller, url, { ...limits, maxBytes: sizeLimitFor(name) });
    },
  };
}

/** Files the user picked (an <input type=file multiple|webkitdirectory>), matched by file name. */
function blobSource(files: File[] | Record<string, Blob>): FileSource {
  const byName = new Map<string, Blob>(
    Array.isArray(files) ? files.map((f) => [f.name, f] as [string, Blob]) : Object.entries(files),
  );
  return {
    description: `picked files (${[...byName.keys()].join(', ')})`,
    async read(name) {
      const blob = byName.get(name);
      return blob ? new Uint8Array(await blob.arrayBuffer()) : null;
    },
  };
}

/** Node only: a directory on disk. */
function dirSource(dir: string): FileSource {
  return {
    description: dir,
    async read(name) {
      const fs = await nodeFs();
      try {
        return new Uint8Array(await fs.readFile(`${dir}/${name}`));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw err;
      }
    },
  };
}

async function nodeFs(): Promise<typeof import('node:fs/promises')> {
  const specifier = 'node:fs/promises'; // a variable, so browser bundles do not try to include it
  return (await import(/* @vite-ignore */ specifier)) as typeof import('node:fs/promises');
}

export type ModelSource = string | File[] | Record<string, Blob> | FileSource;

/** A hub id (`hf:<id>[@rev]`) or huggingface.co URL goes through the hub's cache and progress; other URLs and folders are read as they are. */
function toFileSource(source: ModelSource, hub: HubOptions = {}): FileSource {
  if (typeof source !== 'string')
    return Array.isArray(source) || !('read' in source)
      ? blobSource(source as File[] | Record<string, Blob>)
      : (source as FileSource);
  const ref = parseHubRef(source, hub.endpoint);
  if (ref) return hubSource(ref, hub);
  const inBrowser = typeof window !== 'undefined' || typeof importScripts === 'function';
  return /^https?:\/\//.test(source) || inBrowser ? urlSource(source) : dirSource(source);
}

export interface LoadOptions {
  /** Download options for hub ids: cache, progress, endpoint. */
  hub?: HubOptions;
  /** Refuse, before reading the weights, a model whose estimate (model/memory.ts) exceeds this many bytes. */
  memoryLimitBytes?: number;
  /**
   * How the seven projections of each layer are held: 'auto' (default) keeps a f16/bf16 checkpoint's
   * in its own 16 bits where the backend can multiply them (WebGPU), halving their memory, and frozen
   * (LoRA trains on top); 'float32' always widens them (full fine-tuning needs it).
   */
  precision?: 'auto' | 'float32';
  /**
   * 'int8' quantizes the projections a tensor at a time as they load (model/int8.ts), so they never sit on the
   * heap in float32 — how a 0.5B base fits wasm's 4 GiB — for LoRA only; the memory check counts them
   * in int8. Overrides `precision`. 'auto' (an import): float32 when the model fits `memoryLimitBytes`,
   * else int8 when that fits (said by `linearPrecision`). Default 'none'.
   */
  quantization?: 'none' | 'int8' | 'auto';
}

export interface LoadedModel {
  model: TransformerModel;
  tokenizer: TextTokenizer;
  config: ModelConfig;
  hfConfig: HfConfigJson;
  /** The hub id and revision it came from, for adapters that name their base. */
  hub: HubRef | null;
  /** How the layers' projections are held: float32, their checkpoint's 16-bit format (LoadOptions.precision), or int8 (LoadOptions.quantization). */
  linearPrecision: 'float32' | HalfFormat | 'int8';
}

/** The checkpoint's declared 16-bit format, if any (transformers 4 writes torch_dtype, 5 dtype). */
function checkpointHalfFormat(hfConfig: HfConfigJson): HalfFormat | null {
  const dtype = String(hfConfig.torch_dtype ?? hfConfig.dtype ?? '');
  return dtype === 'bfloat16' ? 'bf16' : dtype === 'float16' ? 'f16' : null;
}

function parseJson<T>(bytes: Uint8Array, what: string): T {
  try {
    return JSON.parse(new TextDecoder().decode(bytes)) as T;
  } catch (err) {
    throw new Error(`${what} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
}

/** Loads an HF-layout model. Create the tfjs backend first (initBackend). */
export async function loadHfModel(source: ModelSource, opts: LoadOptions = {}): Promise<LoadedModel> {
  const files = toFileSource(source, opts.hub);
  const hub = typeof source === 'string' ? parseHubRef(source, opts.hub?.endpoint) : null;
  const where = files.description;
  const configBytes = await files.read('config.json');
  if (!configBytes)
    throw new Error(
      `config.json is missing in ${where}; an HF model folder needs config.json, model.safetensors and tokenizer.json.`,
    );
  const hfConfig = parseJson<HfConfigJson>(configBytes, `config.json in ${where}`);
  const config = fromHfConfig(hfConfig);
  const tokenizer = await loadTokenizer(files, hfConfig, hub ? hub.id : typeof source === 'string' ? source : where);
  if (tokenizer.vocabSize > config.vocabSize) {
    throw new Error(
      `tokenizer in ${where} has ${tokenizer.vocabSize} tokens but config.json vocab_size is ${config.vocabSize}.`,
    );
  }
  const fileHalf = checkpointHalfFormat(hfConfig);
  const halfFor = (q: 'none' | 'int8') =>
    q === 'none' && opts.precision !== 'float32' && fileHalf && hasFusedKernel(HALF_MATMUL_KERNEL) ? fileHalf : null;
  // The step as Spindle trains it: blocks recomputed (model/memory.ts's default), the base in int8 when asked.
  const estimateFor = (q: 'none' | 'int8') => {
    const half = halfFor(q);
    return estimateMemory(config, {
      fileBytesPerParam: fileHalf ? 2 : 4,
      halfLinears: half !== null,
      decodeCopies: half === null && hasFusedKernel(DECODE_STEP_KERNEL),
      sequence: IMPORT_CHECK_TOKENS,
      quantization: q,
    });
  };
  let quantization: 'none' | 'int8' = opts.quantization === 'int8' ? 'int8' : 'none';
  if (opts.memoryLimitBytes !== undefined) {
    const limit = opts.memoryLimitBytes;
    const fitsInt8 = quantization === 'none' && neededBytes(estimateFor('int8')) <= limit;
    // 'auto': a base too large in float32 is held in int8 when that fits (a 0.5B model on wasm's heap).
    if (opts.quantization === 'auto' && fitsInt8 && neededBytes(estimateFor('none')) > limit) quantization = 'int8';
    assertFits(
      estimateFor(quantization),
      limit,
      `The model in ${where}`,
      fitsInt8 ? 'With its base in int8 (model.quantization: int8) it would fit. ' : '',
    );
  }
  const halfLinears = halfFor(quantization);
  const weights = await loadWeights(files);
  // Everything is checked against the files before the model allocates anything from the config.
  checkWeights(weights, config, where);
  assertFiniteTensors(weights, `model weights in ${where}`);
  const model = TransformerModel.fromWeights(config, weights, `model weights in ${where}`, halfLinears, quantization);
  return {
    model,
    tokenizer,
    config,
    hfConfig,
    hub,
    linearPrecision: quantization === 'int8' ? 'int8' : (halfLinears ?? 'float32'),
  };
}

/**
 * The tokenizer, its config and the chat template (chat_template.jinja over tokenizer_config.json's, as in
 * transformers). `name` becomes the config's `name_or_path`, as transformers sets it on load, so messages
 * about the model (a template refused for tools) can name it wherever the tokenizer goes.
 */
async function loadTokenizer(files: FileSource, hfConfig: HfConfigJson, name: string): Promise<TextTokenizer> {
  // A byte model's tokenizer.json is there for transformers; Spindle keeps its own byte tokenizer (same ids).
  if (hfConfig.spindle_tokenizer === 'byte') return new ByteTokenizer();
  const json = await files.read('tokenizer.json');
  if (json) {
    const configBytes = await files.read('tokenizer_config.json');
    const tokenizerConfig = configBytes ? parseJson<Record<string, unknown>>(configBytes, 'tokenizer_config.json') : {};
    const jinja = await files.read(CHAT_TEMPLATE_FILE);
    const { config, file } = withChatTemplate(tokenizerConfig, jinja && new TextDecoder().decode(jinja));
    return HfTokenizer.fromJson(
      parseJson<object>(json, 'tokenizer.json'),
      { ...config, name_or_path: name },
      { eosTokenId: hfConfig.eos_token_id, chatTemplateFile: file },
    );
  }
  throw new Error(
    `tokenizer.json is missing in ${files.description} (and config.json does not name "spindle_tokenizer": "byte").`,
  );
}

async function loadWeights(files: FileSource): Promise<HostTensors> {
  const single = await files.read('model.safetensors');
  if (single) return readSafetensors(single, 'model.safetensors').tensors;
  const indexBytes = await files.read('model.safetensors.index.json');
  if (!indexBytes)
    throw new Error(`Neither model.safetensors nor model.safetensors.index.json is in ${files.description}.`);
  const index = parseJson<{ weight_map?: Record<string, string> }>(indexBytes, 'model.safetensors.index.json');
  if (!index.weight_map) throw new Error('model.safetensors.index.json has no "weight_map" field.');
  const weights: HostTensors = new Map();
  for (const shard of new Set(Object.values(index.weight_map))) {
    const bytes = await files.read(shard);
    if (!bytes)
      throw new Error(`Shard "${shard}" listed in model.safetensors.index.json is missing in ${files.description}.`);
    for (const [name, t] of readSafetensors(bytes, shard).tensors) weights.set(name, t);
  }
  for (const [name, shard] of Object.entries(index.weight_map)) {
    if (!weights.has(name))
      throw new Error(
        `Tensor "${name}" is listed in model.safetensors.index.json for "${shard}" but that shard does not contain it.`,
      );
  }
  return weights;
}

/**
 * The files of an HF-layout model folder: config.json, model.safetensors, tokenizer.json and
 * tokenizer_config.json, and chat_template.jinja when the template was read from one (transformers 5's
 * layout). `name_or_path` is left out, as transformers leaves it out: it says where this copy was loaded from.
 */
export async function saveModel(model: TransformerModel, tokenizer: TextTokenizer): Promise<Map<string, Uint8Array>> {
  const files = new Map<string, Uint8Array>();
  files.set(
    'config.json',
    new TextEncoder().encode(JSON.stringify(hfConfigFor(model.config, tokenizer), null, 2) + '\n'),
  );
  files.set('model.safetensors', writeSafetensors(await model.getWeights(), { format: 'pt' }));
  for (const [name, bytes] of tokenizerFiles(tokenizer)) files.set(name, bytes);
  return files;
}

/** config.json for a model of `config` with this tokenizer (its stop and pad ids; the byte tokenizer's marker). */
export function hfConfigFor(config: ModelConfig, tokenizer: TextTokenizer): HfConfigJson {
  const extra: Partial<HfConfigJson> = { eos_token_id: tokenizer.eosId, pad_token_id: tokenizer.padId };
  if (tokenizer instanceof ByteTokenizer) extra.spindle_tokenizer = 'byte';
  return toHfConfig(config, extra);
}

/** The tokenizer's files in Hugging Face layout (tokenizer.json, tokenizer_config.json, chat_template.jinja when it came as one). */
export function tokenizerFiles(tokenizer: TextTokenizer): Map<string, Uint8Array> {
  const encoder = new TextEncoder();
  const files = new Map<string, Uint8Array>();
  if (tokenizer instanceof HfTokenizer) {
    const { name_or_path: _loadedFrom, ...config } = tokenizer.configJson;
    files.set('tokenizer.json', encoder.encode(JSON.stringify(tokenizer.json)));
    if (tokenizer.chatTemplateFile === CHAT_TEMPLATE_FILE && typeof config.chat_template === 'string') {
      files.set(CHAT_TEMPLATE_FILE, encoder.encode(config.chat_template));
      delete config.chat_template;
    }
    files.set('tokenizer_config.json', encoder.encode(JSON.stringify(config)));
  } else if (tokenizer instanceof ByteTokenizer) {
    // For transformers' AutoTokenizer; Spindle itself reads the spindle_tokenizer marker.
    files.set('tokenizer.json', encoder.encode(JSON.stringify(byteTokenizerJson())));
    files.set('tokenizer_config.json', encoder.encode(JSON.stringify(byteTokenizerConfig())));
  }
  return files;
}

/** Node only: writes `saveModel`'s files into `dir` (created if needed). */
export async function saveModelToDir(model: TransformerModel, tokenizer: TextTokenizer, dir: string): Promise<void> {
  const fs = await nodeFs();
  await fs.mkdir(dir, { recursive: true });
  for (const [name, bytes] of await saveModel(model, tokenizer)) await fs.writeFile(`${dir}/${name}`, bytes);
}
