/**
 * The user's own environments in the CLI: the `--env-file` flag, and what pipeline/node-environments.ts
 * needs from the command line to resolve them with the config's `tasks.task_file` / `tasks.env_files`
 * and the store's (`spindle envs add`): files read relative to the working folder, the store at --store.
 */
import type { CommandContext, OptionSpec } from '../command.ts';
import type { RunConfig } from '../../config/schema.ts';
import type { EnvironmentSource } from '../../contracts.ts';
import { readEnvironmentSource, resolveUserEnvironments, storedEnvironmentSources } from '../../pipeline/node-environments.ts';
import type { NodeStore } from '../../pipeline/node-store.ts';
import { hasStore, readBytes, withStore, type Values } from './shared.ts';

export const envFileOption: OptionSpec = {
  type: 'string', multiple: true, placeholder: 'file',
  description: 'your own environment: a JavaScript module (.js) or a task file (.jsonl, .json, .csv, .tsv, .parquet), a path or an https URL; added to the environments used (repeatable)',
};

/** A file (or URL) as an environment source; the problems (rows and fields, module lines) are the error. */
export function readEnvironmentFile(ctx: CommandContext, path: string): Promise<EnvironmentSource> {
  return readEnvironmentSource(path, { readLocal: (p) => readBytes(ctx, p, 'environment file'), signal: ctx.signal });
}

/** Environments kept by `spindle envs add` in the store at --store (or `open`; none when there is no store yet). */
export async function storedSources(ctx: CommandContext, values: Values, open?: NodeStore): Promise<EnvironmentSource[]> {
  if (open) return storedEnvironmentSources(open);
  return hasStore(ctx, values) ? withStore(ctx, values, storedEnvironmentSources, { readOnly: true }) : [];
}

/** The config with the user environments a command uses installed and named, and their sources for the run record. */
export async function useUserEnvironments(ctx: CommandContext, values: Values, config: RunConfig, store?: NodeStore): Promise<{ config: RunConfig; sources: EnvironmentSource[] }> {
  const files = listOption(values, 'env-file');
  return resolveUserEnvironments(config, { files, stored: await storedSources(ctx, values, store), readLocal: (p) => readBytes(ctx, p, 'environment file'), signal: ctx.signal });
}

function listOption(values: Values, name: string): string[] {
  const v = values[name];
  return Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
}
