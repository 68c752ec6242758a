/**
 * The user's own environments in the CLI: the config's `tasks.task_file` and `tasks.env_files`, the
 * `--env-file` flags, and environments kept in the store by `spindle envs add`. Each is read, built in
 * the sandbox and installed, so the run, its rollout workers and its record all see the same source.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CliError, type CommandContext, type OptionSpec } from '../command.ts';
import type { RunConfig } from '../../config/schema.ts';
import type { EnvironmentSource } from '../../contracts.ts';
import { describeEnvironments, isBuiltinEnvironment } from '../../envs/registry.ts';
import { environmentSourceFromFile, installEnvironmentSource } from '../../envs/sources.ts';
import { fetchEnvironmentFile, isUrl } from '../../pipeline/environment-url.ts';
import { openFileStore, SNAPSHOT_FILE } from '../../store/file-store.ts';
import { listEnvironmentRecords, type Store } from '../../store/index.ts';
import { readBytes, storeDir, type Values } from './shared.ts';

export const envFileOption: OptionSpec = {
  type: 'string', multiple: true, placeholder: 'file',
  description: 'your own environment: a JavaScript module (.js) or a task file (.jsonl, .json, .csv, .tsv, .parquet), a path or an https URL; added to the environments used (repeatable)',
};

/** A file as an environment source; the problems (rows and fields, module lines) are the error. */
export async function readEnvironmentFile(ctx: CommandContext, path: string, verifier: Record<string, unknown> | null = null): Promise<EnvironmentSource> {
  const local = isUrl(path) ? null : readBytes(ctx, path, 'environment file');
  try {
    if (local) return await environmentSourceFromFile(local, path, { verifier });
    const { bytes, fileName } = await fetchEnvironmentFile(path, { signal: ctx.signal });
    return await environmentSourceFromFile(bytes, fileName, { verifier });
  } catch (e) {
    throw new CliError(`${path}: ${(e as Error).message}`);
  }
}

/** Environments kept by `spindle envs add` in the store at --store (none when there is no store yet). */
export async function storedSources(ctx: CommandContext, values: Values, open?: Store): Promise<EnvironmentSource[]> {
  if (open) return (await listEnvironmentRecords(open)).map((r) => r.source);
  const dir = storeDir(ctx, values);
  if (!existsSync(join(dir, SNAPSHOT_FILE))) return [];
  const store = await openFileStore(dir);
  try {
    return (await listEnvironmentRecords(store)).map((r) => r.source);
  } finally {
    await store.close();
  }
}

/**
 * Installs the user environments a command uses and returns the config with them named in
 * `tasks.environments` (files are added when not named), plus their sources for the run record. An
 * environment name that is neither built in, nor in a file, nor in the store fails, listing the known ones.
 */
export async function useUserEnvironments(ctx: CommandContext, values: Values, config: RunConfig, store?: Store): Promise<{ config: RunConfig; sources: EnvironmentSource[] }> {
  const c = structuredClone(config);
  const fromFiles: EnvironmentSource[] = [];
  if (c.tasks.task_file) fromFiles.push(await readEnvironmentFile(ctx, c.tasks.task_file, c.tasks.verifier as Record<string, unknown> | null));
  for (const path of [...c.tasks.env_files, ...listOption(values, 'env-file')]) fromFiles.push(await readEnvironmentFile(ctx, path, c.tasks.verifier as Record<string, unknown> | null));
  const stored = await storedSources(ctx, values, store);
  const sources: EnvironmentSource[] = [];
  for (const source of fromFiles) {
    if (!c.tasks.environments.includes(source.name)) c.tasks.environments.push(source.name);
    sources.push(source);
  }
  for (const name of c.tasks.environments) {
    if (isBuiltinEnvironment(name) || sources.some((s) => s.name === name)) continue;
    const source = stored.find((s) => s.name === name);
    if (!source) {
      const known = [...describeEnvironments().map((e) => e.name), ...stored.map((s) => s.name)];
      throw new CliError(`Unknown environment "${name}". Known: ${[...new Set(known)].sort().join(', ')}. Add your own with \`spindle envs add FILE\` or --env-file FILE.`);
    }
    sources.push(source);
  }
  for (const source of sources) {
    try {
      await installEnvironmentSource(source);
    } catch (e) {
      throw new CliError(`environment ${source.name}${source.file ? ` (${source.file})` : ''}: ${(e as Error).message}`);
    }
  }
  return { config: c, sources };
}

function listOption(values: Values, name: string): string[] {
  const v = values[name];
  return Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
}
