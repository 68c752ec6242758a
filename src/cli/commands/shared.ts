/**
 * What the CLI commands share: typed option reading (a bad number is a usage error that names the
 * flag), files relative to the working folder, and the CLI's side of the Node platform (the store
 * folder, the model's path, hub download progress) over pipeline/platform/node-store.ts and node-model.ts, which
 * do the work. Every failure is one line (a CliError, or the pipeline's one-sentence Error).
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { CliError, type CommandContext, type OptionSpec } from '../command.ts';
import { pipeline } from '../pipeline.ts';
import { formatConfigErrors } from '../../config/yaml.ts';
import { DEFAULT_CONFIG, type RunConfig } from '../../config/schema.ts';
import type { NodeModel } from '../../pipeline/platform/node-model.ts';
import type { NodeStore, NodeStoreAccess } from '../../pipeline/platform/node-store.ts';

export type Values = Record<string, string | boolean | string[] | undefined>;

const DEFAULT_STORE = '.spindle';

export const storeOption: OptionSpec = {
  type: 'string',
  default: DEFAULT_STORE,
  description: 'the Spindle store folder',
  placeholder: 'dir',
};
export const modelOption: OptionSpec = {
  type: 'string',
  placeholder: 'dir|hf:id|url',
  description:
    "policy model: a folder (HF layout), hf:<owner>/<name>[@revision], or an https URL of such a folder; default: the config's model.base_model (spindle-base = models/spindle-base)",
};

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
  if (!Number.isInteger(n) || n < min)
    throw new CliError(`--${name} must be a whole number ≥ ${min}, got "${raw}".`, 2);
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
  if (!(choices as readonly string[]).includes(raw))
    throw new CliError(`--${name} is "${raw}"; allowed: ${choices.join(', ')}.`, 2);
  return raw as T;
}

export function noPositionals(positionals: string[], command: string): void {
  if (positionals.length)
    throw new CliError(`Unexpected argument "${positionals[0]}" (see \`spindle ${command} --help\`).`, 2);
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
  if (existsSync(full) && !statSync(full).isDirectory())
    throw new CliError(`--output ${path} is a file; expected a folder.`, 2);
  mkdirSync(full, { recursive: true });
  return full;
}

// ---------------------------------------------------------------- config

/**
 * Loads and validates a run config file. Environments are checked against the built-ins, unless
 * `userEnvironments` says the command resolves the user's own afterwards (user-envs.ts), which checks them.
 */
export function loadConfigFile(
  ctx: CommandContext,
  path: string,
  options: { userEnvironments?: boolean } = {},
): RunConfig {
  const text = readText(ctx, path, 'run config');
  const { config, errors } = pipeline().parseRunConfig(text, options);
  if (!config || errors.length) {
    const [first, ...rest] = formatConfigErrors(errors, path).split('\n');
    throw new CliError(
      rest.length ? `${first} (and ${rest.length} more; see \`spindle config check --config ${path}\`)` : first,
    );
  }
  return config;
}

export function configOrDefault(
  ctx: CommandContext,
  path: string | undefined,
  fallback: RunConfig = DEFAULT_CONFIG,
  options: { userEnvironments?: boolean } = {},
): RunConfig {
  return path ? loadConfigFile(ctx, path, options) : structuredClone(fallback);
}

// ---------------------------------------------------------------- store

export function storeDir(ctx: CommandContext, values: Values): string {
  return resolve(ctx.cwd, stringOption(values, 'store') ?? DEFAULT_STORE);
}

/** Whether --store holds a Spindle store yet. */
export function hasStore(ctx: CommandContext, values: Values): boolean {
  return pipeline().hasNodeStore(storeDir(ctx, values));
}

/**
 * Opens the store at --store, runs `fn`, and saves and closes it whatever happens: to write (the default;
 * `create` makes a missing one; a second writer is refused by name), or `readOnly` (reads even while a
 * writer holds the store, writes nothing).
 */
export function withStore<T>(
  ctx: CommandContext,
  values: Values,
  fn: (store: NodeStore) => Promise<T>,
  access: Omit<NodeStoreAccess, 'hint'> = {},
): Promise<T> {
  return pipeline().withNodeStore(storeDir(ctx, values), fn, {
    ...access,
    hint: 'run `spindle collect` or `spindle train` first, or pass --store DIR.',
  });
}

// ---------------------------------------------------------------- model

/** The model folder: --model, else `baseModel` (a config's model.base_model; `spindle-base` → <repo>/models/spindle-base). */
export function modelPath(ctx: CommandContext, values: Values, baseModel = DEFAULT_CONFIG.model.base_model): string {
  const flag = stringOption(values, 'model');
  if (flag) return pipeline().isRemoteModel(flag) ? flag : resolve(ctx.cwd, flag);
  return pipeline().resolveModelPath(baseModel);
}

/**
 * Loads the policy model. Hub downloads from the CLI are cached on disk (SPINDLE_CACHE, default
 * ~/.cache/spindle/hub; an interrupted file continues where it stopped), come from HF_ENDPOINT when set (a
 * mirror, or a local server in tests), stop on the first Ctrl-C, and print a progress line per file.
 */
export async function loadModel(
  ctx: CommandContext,
  dir: string,
  config: RunConfig = DEFAULT_CONFIG,
): Promise<NodeModel> {
  const shown = new Map<string, number>();
  return pipeline().loadPolicyModel(dir, {
    config,
    hub: {
      endpoint: process.env.HF_ENDPOINT || undefined,
      cacheDir: process.env.SPINDLE_CACHE || join(homedir(), '.cache', 'spindle', 'hub'),
      signal: ctx.signal,
      onProgress: ({ file, loaded, total }) => {
        const percent = total ? Math.floor((100 * loaded) / total) : 0;
        const last = shown.get(file) ?? -1;
        if (percent === last || (percent < 100 && percent - last < 25)) return;
        shown.set(file, percent);
        ctx.out(
          `download ${file}: ${total ? `${percent}% of ${(total / 1e6).toFixed(1)} MB` : `${(loaded / 1e6).toFixed(1)} MB`}`,
        );
      },
    },
    onChatFormat: (summary) => ctx.err(`model ${dir}: chat format: ${summary}`),
  });
}

export function formatScore(x: number | null | undefined): string {
  return x === null || x === undefined || Number.isNaN(x) ? '—' : x.toFixed(3);
}

export function percent(x: number): string {
  return `${(100 * x).toFixed(1)}%`;
}
