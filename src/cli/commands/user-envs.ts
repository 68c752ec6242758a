/**
 * The user's own environments in the CLI: the `--env-file` flag, and what pipeline/platform/node-environments.ts
 * needs from the command line to resolve them with the config's `tasks.task_file` / `tasks.env_files`
 * and the store's (`spindle envs add`): files read relative to the working folder, the store at --store.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { CliError, type CommandContext, type OptionSpec } from '../command.ts';
import { pipeline } from '../pipeline.ts';
import type { RunConfig } from '../../config/schema.ts';
import type { EnvironmentSource } from '../../contracts.ts';
import type { NodeStore } from '../../pipeline/platform/node-store.ts';
import { hasStore, readBytes, withStore, type Values } from './shared.ts';

export const envFileOption: OptionSpec = {
  type: 'string',
  multiple: true,
  placeholder: 'file',
  description:
    'your own environment: a JavaScript module (.js) or a task file (.jsonl, .json, .csv, .tsv, .parquet), a path or an https URL; added to the environments used (repeatable)',
};

/** A file (or URL) for an audit to read, within its budget. */
export function environmentFile(
  ctx: CommandContext,
  path: string,
): { file: string; readLocal: (path: string) => Uint8Array } {
  return { file: path, readLocal: (p) => readEnvironmentBytes(ctx, p) };
}

/** An environment file's bytes; one above the size cap is refused before it is read. */
function readEnvironmentBytes(ctx: CommandContext, path: string): Uint8Array {
  const full = resolve(ctx.cwd, path);
  const size = existsSync(full) ? statSync(full).size : 0;
  if (size > pipeline().MAX_ENVIRONMENT_FILE_BYTES) {
    throw new CliError(
      `${path} is ${size} bytes, above the ${pipeline().MAX_ENVIRONMENT_FILE_BYTES} (32 MiB) an environment file may have; split a task file, or keep the rows you train on.`,
    );
  }
  return readBytes(ctx, path, 'environment file');
}

/** Environments kept by `spindle envs add` in the store at --store (or `open`; none when there is no store yet). */
export async function storedSources(
  ctx: CommandContext,
  values: Values,
  open?: NodeStore,
): Promise<EnvironmentSource[]> {
  if (open) return pipeline().storedEnvironmentSources(open);
  return hasStore(ctx, values) ? withStore(ctx, values, pipeline().storedEnvironmentSources, { readOnly: true }) : [];
}

/** The config with the user environments a command uses installed and named, and their sources for the run record. */
export async function useUserEnvironments(
  ctx: CommandContext,
  values: Values,
  config: RunConfig,
  store?: NodeStore,
): Promise<{ config: RunConfig; sources: EnvironmentSource[] }> {
  const files = listOption(values, 'env-file');
  const stored = await storedSources(ctx, values, store);
  return pipeline().resolveUserEnvironments(config, {
    files,
    stored,
    readLocal: (p) => readEnvironmentBytes(ctx, p),
    signal: ctx.signal,
  });
}

function listOption(values: Values, name: string): string[] {
  const v = values[name];
  return Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
}
