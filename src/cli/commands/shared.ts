/**
 * What the CLI commands share: typed option reading (a bad number is a usage error that names the
 * flag), loading a run config file, opening the file-backed store, loading the policy model (with an
 * optional PEFT adapter) and writing output files. Every failure here is a one-line CliError.
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { CliError, type CommandContext, type OptionSpec } from '../command.ts';
import { formatConfigErrors, parseRunConfigYaml } from '../../config/yaml.ts';
import { DEFAULT_CONFIG, type RunConfig } from '../../config/schema.ts';
import { listEnvironments } from '../../envs/registry.ts';
import { initBackend, type BackendChoice } from '../../model/backend.ts';
import { loadHfModel, type LoadedModel } from '../../model/hf.ts';
import { HfTokenizer } from '../../model/hf-tokenizer.ts';
import type { HostTensors } from '../../model/transformer.ts';
import { diskCache, type HubOptions } from '../../model/hub.ts';
import { attachLora, importLora } from '../../model/lora.ts';
import { readAdapter, type PeftConfig } from '../../export/peft.ts';
import { resolveModelPath } from '../../pipeline/node.ts';
import { chatFormatSummary } from '../../rollout/conversation.ts';
import { openFileStore, SNAPSHOT_FILE, type FileStore } from '../../store/file-store.ts';
import { getRun, listRuns, loadLatestCheckpoint, type RunRecord } from '../../store/index.ts';

export type Values = Record<string, string | boolean | string[] | undefined>;

const DEFAULT_STORE = '.spindle';

export const storeOption: OptionSpec = { type: 'string', default: DEFAULT_STORE, description: 'the Spindle store folder', placeholder: 'dir' };
export const modelOption: OptionSpec = {
  type: 'string', placeholder: 'dir|hf:id|url',
  description: 'policy model: a folder (HF layout), hf:<owner>/<name>[@revision], or an https URL of such a folder; default: the config\'s model.base_model (spindle-base = models/spindle-base)',
};

/** A model named by hub id or URL, downloaded (and cached) rather than read from a folder. */
const REMOTE_MODEL = /^(hf:|https?:\/\/)/;

// ---------------------------------------------------------------- options

export function stringOption(values: Values, name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
}

export function requireOption(values: Values, name: string, example: string): string {
  const v = stringOption(values, name);
  if (v === undefined || v === '') throw new CliError(`--${name} is required, e.g. ${example}.`, 2);
  return v;
}

/** A whole number flag; `undefined` when absent. */
export function intOption(values: Values, name: string, min = 1): number | undefined {
  const raw = stringOption(values, name);
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new CliError(`--${name} must be a whole number ≥ ${min}, got "${raw}".`, 2);
  return n;
}

export function numberOption(values: Values, name: string): number | undefined {
  const raw = stringOption(values, name);
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n)) throw new CliError(`--${name} must be a number, got "${raw}".`, 2);
  return n;
}

export function choiceOption<T extends string>(values: Values, name: string, choices: readonly T[], fallback?: T): T {
  const raw = stringOption(values, name) ?? fallback;
  if (raw === undefined) throw new CliError(`--${name} is required: one of ${choices.join(', ')}.`, 2);
  if (!(choices as readonly string[]).includes(raw)) throw new CliError(`--${name} is "${raw}"; allowed: ${choices.join(', ')}.`, 2);
  return raw as T;
}

export function noPositionals(positionals: string[], command: string): void {
  if (positionals.length) throw new CliError(`Unexpected argument "${positionals[0]}" (see \`spindle ${command} --help\`).`, 2);
}

// ---------------------------------------------------------------- files

export function inputPath(ctx: CommandContext, path: string, what = 'file'): string {
  const full = resolve(ctx.cwd, path);
  if (!existsSync(full)) throw new CliError(`${path} does not exist (looked for the ${what} at ${full}).`);
  return full;
}

export function readText(ctx: CommandContext, path: string, what = 'file'): string {
  const full = inputPath(ctx, path, what);
  try {
    return readFileSync(full, 'utf8');
  } catch (e) {
    throw new CliError(`${path} cannot be read: ${(e as Error).message}`);
  }
}

export function readBytes(ctx: CommandContext, path: string, what = 'file'): Uint8Array {
  const full = inputPath(ctx, path, what);
  if (statSync(full).isDirectory()) throw new CliError(`${path} is a folder; expected a ${what}.`);
  try {
    return new Uint8Array(readFileSync(full));
  } catch (e) {
    throw new CliError(`${path} cannot be read: ${(e as Error).message}`);
  }
}

/** Writes a file, creating its folder; returns the absolute path. */
export function writeOutput(ctx: CommandContext, path: string, data: string | Uint8Array): string {
  const full = resolve(ctx.cwd, path);
  try {
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, data);
  } catch (e) {
    throw new CliError(`cannot write ${path}: ${(e as Error).message}`);
  }
  return full;
}

export function outputDir(ctx: CommandContext, path: string): string {
  const full = resolve(ctx.cwd, path);
  if (existsSync(full) && !statSync(full).isDirectory()) throw new CliError(`--output ${path} is a file; expected a folder.`, 2);
  mkdirSync(full, { recursive: true });
  return full;
}

// ---------------------------------------------------------------- config

/**
 * Loads and validates a run config file. Environments are checked against the built-ins, unless
 * `userEnvironments` says the command resolves the user's own afterwards (user-envs.ts), which checks them.
 */
export function loadConfigFile(ctx: CommandContext, path: string, options: { userEnvironments?: boolean } = {}): RunConfig {
  const text = readText(ctx, path, 'run config');
  const { config, errors } = parseRunConfigYaml(text, { knownEnvironments: options.userEnvironments ? undefined : listEnvironments().map((e) => e.name) });
  if (!config || errors.length) {
    const [first, ...rest] = formatConfigErrors(errors, path).split('\n');
    throw new CliError(rest.length ? `${first} (and ${rest.length} more; see \`spindle config check --config ${path}\`)` : first);
  }
  return config;
}

export function configOrDefault(ctx: CommandContext, path: string | undefined, fallback: RunConfig = DEFAULT_CONFIG, options: { userEnvironments?: boolean } = {}): RunConfig {
  return path ? loadConfigFile(ctx, path, options) : structuredClone(fallback);
}

// ---------------------------------------------------------------- store

export function storeDir(ctx: CommandContext, values: Values): string {
  return resolve(ctx.cwd, stringOption(values, 'store') ?? DEFAULT_STORE);
}

/** Whether --store holds a Spindle store yet. */
export function hasStore(ctx: CommandContext, values: Values): boolean {
  return existsSync(join(storeDir(ctx, values), SNAPSHOT_FILE));
}

/** Opens the store (creating it with `create`), runs `fn`, and saves and closes it whatever happens. */
export async function withStore<T>(ctx: CommandContext, values: Values, fn: (store: FileStore) => Promise<T>, create = false): Promise<T> {
  const dir = storeDir(ctx, values);
  if (!create && !existsSync(join(dir, SNAPSHOT_FILE))) {
    throw new CliError(`There is no Spindle store in ${dir} (no ${SNAPSHOT_FILE}); run \`spindle collect\` or \`spindle train\` first, or pass --store DIR.`);
  }
  let store: FileStore;
  try {
    store = await openFileStore(dir);
  } catch (e) {
    throw new CliError(`cannot open the store in ${dir}: ${(e as Error).message}`);
  }
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** The run named by --run, or the newest run (with a checkpoint when `needCheckpoint`). */
export async function findRun(store: FileStore, id: string | undefined, needCheckpoint = false): Promise<RunRecord> {
  if (id) {
    const run = await getRun(store, id);
    if (!run) {
      const known = (await listRuns(store)).slice(0, 5).map((r) => r.id);
      throw new CliError(`There is no run "${id}" in ${store.path}.${known.length ? ` Recent runs: ${known.join(', ')}.` : ''}`);
    }
    return run;
  }
  for (const run of await listRuns(store)) {
    if (!needCheckpoint || (await loadLatestCheckpoint(store, run.id))) return run;
  }
  throw new CliError(`The store ${store.path} has no run${needCheckpoint ? ' with a checkpoint' : ''} yet; train one first or pass --run ID.`);
}

// ---------------------------------------------------------------- model

let backend: Promise<BackendChoice> | null = null;

/** Starts the tfjs backend once per process (Node: wasm). */
function ensureBackend(config: RunConfig = DEFAULT_CONFIG): Promise<BackendChoice> {
  backend ??= initBackend({ forced: config.model.backend === 'auto' ? null : config.model.backend });
  return backend;
}

/** The model folder: --model, else `baseModel` (a config's model.base_model; `spindle-base` → <repo>/models/spindle-base). */
export function modelPath(ctx: CommandContext, values: Values, baseModel = DEFAULT_CONFIG.model.base_model): string {
  const flag = stringOption(values, 'model');
  if (flag) return REMOTE_MODEL.test(flag) ? flag : resolve(ctx.cwd, flag);
  return resolveModelPath(baseModel);
}

/**
 * Hub downloads from the CLI: cached on disk (SPINDLE_CACHE, default ~/.cache/spindle/hub; an interrupted
 * file continues where it stopped), from HF_ENDPOINT when set (a mirror, or a local server in tests),
 * with a progress line per file.
 */
function hubOptions(ctx: CommandContext): HubOptions {
  const shown = new Map<string, number>();
  return {
    endpoint: process.env.HF_ENDPOINT || undefined,
    cache: diskCache(process.env.SPINDLE_CACHE || join(homedir(), '.cache', 'spindle', 'hub')),
    // The first Ctrl-C stops a download, keeping what arrived for a resume.
    signal: ctx.signal,
    onProgress: ({ file, loaded, total }) => {
      const percent = total ? Math.floor((100 * loaded) / total) : 0;
      const last = shown.get(file) ?? -1;
      if (percent === last || (percent < 100 && percent - last < 25)) return;
      shown.set(file, percent);
      ctx.out(`download ${file}: ${total ? `${percent}% of ${(total / 1e6).toFixed(1)} MB` : `${(loaded / 1e6).toFixed(1)} MB`}`);
    },
  };
}

export async function loadModel(ctx: CommandContext, dir: string, config: RunConfig = DEFAULT_CONFIG): Promise<LoadedModel> {
  if (!REMOTE_MODEL.test(dir)) {
    if (!existsSync(join(dir, 'config.json'))) {
      const shipped = dir === resolveModelPath('spindle-base');
      throw new CliError(shipped
        ? `The shipped model is not in ${dir} yet (build it with \`npm run model:base\`), or pass --model DIR.`
        : `${dir} is not a model folder (no config.json); pass --model with a Hugging Face layout folder.`);
    }
  }
  await ensureBackend(config);
  let loaded: LoadedModel;
  try {
    loaded = await loadHfModel(dir, { hub: hubOptions(ctx) });
  } catch (e) {
    throw new CliError(`cannot load the model from ${dir}: ${(e as Error).message}`);
  }
  // Which template (chat_template.jinja or tokenizer_config.json) and call format a Hugging Face model runs in, or that it has none.
  if (loaded.tokenizer instanceof HfTokenizer) ctx.err(`model ${dir}: chat format: ${chatFormatSummary(loaded.tokenizer)}`);
  return loaded;
}

/** Attaches a PEFT adapter zip to a plain model (layers the adapter lacks get none). */
export function applyAdapter(ctx: CommandContext, loaded: LoadedModel, path: string): PeftConfig {
  const bytes = readBytes(ctx, path, 'adapter zip');
  let adapter;
  try {
    adapter = readAdapter(bytes, path, { modelConfig: loaded.config });
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  attachAdapter(ctx, loaded, adapter.config, adapter.tensors, path);
  return adapter.config;
}

/** Attaches LoRA adapters shaped like `config` to the layers the tensors cover, and loads them. */
export function attachAdapter(_ctx: CommandContext, loaded: LoadedModel, config: PeftConfig, tensors: HostTensors, label: string): void {
  const layers = new Set([...tensors.keys()].map((k) => Number(/layers\.(\d+)\./.exec(k)![1])));
  const without = loaded.model.layers.map((_, i) => i).filter((i) => !layers.has(i));
  attachLora(loaded.model, {
    r: config.r, alpha: config.lora_alpha, dropout: 0, targetModules: config.target_modules,
    freezeLayers: without.length ? without.join(',') : null,
  });
  try {
    importLora(loaded.model, tensors);
  } catch (e) {
    throw new CliError(`${label}: ${(e as Error).message}`);
  }
}

export function formatScore(x: number | null | undefined): string {
  return x === null || x === undefined || Number.isNaN(x) ? '—' : x.toFixed(3);
}

export function percent(x: number): string {
  return `${(100 * x).toFixed(1)}%`;
}
