/**
 * The user's own environments for an operation run in Node (train, collect, eval): the config's
 * `tasks.task_file` and `tasks.env_files`, the files a command adds, and environments kept in the store
 * (`spindle envs add`). Each is read, built in the sandbox and installed, so the run, its rollout workers
 * and its record all see the same source. Also which environments a run config file may name. The
 * caller supplies how a local path is read (relative to its folder).
 */
import type { RunConfig } from '../../config/schema.ts';
import { parseRunConfigYaml } from '../../config/yaml.ts';
import type { EnvironmentSource } from '../../contracts.ts';
import { describeEnvironments, isBuiltinEnvironment, listEnvironments } from '../../envs/registry.ts';
import { CheckTimeoutError, type CheckBudget } from '../../envs/check-budget.ts';
import { environmentSourceFromFile, installEnvironmentSource } from '../../envs/sources.ts';
import { MAX_TASK_FILE_BYTES } from '../../envs/task-file/index.ts';
import { listEnvironmentRecords, type Store } from '../../store/index.ts';
import { fetchEnvironmentFile, isUrl } from '../operations/environment-url.ts';

/** How a caller reads a local file (its own errors, e.g. "does not exist", pass through unchanged). */
export type ReadLocal = (path: string) => Uint8Array;

/** The largest environment file read (a task file's cap; a module is far smaller): a caller checks a file's size before reading it. */
export const MAX_ENVIRONMENT_FILE_BYTES = MAX_TASK_FILE_BYTES;

/**
 * A run config file's text, validated. Environments are checked against the built-ins, unless
 * `userEnvironments` says the caller resolves the user's own afterwards (resolveUserEnvironments checks them).
 */
export function parseRunConfig(
  text: string,
  options: { userEnvironments?: boolean } = {},
): ReturnType<typeof parseRunConfigYaml> {
  return parseRunConfigYaml(text, {
    knownEnvironments: options.userEnvironments ? undefined : listEnvironments().map((e) => e.name),
  });
}

/** A file or https URL as an environment source; its problems (rows and fields, module lines) are the error, after the path. */
export async function readEnvironmentSource(
  path: string,
  options: {
    readLocal: ReadLocal;
    verifier?: Record<string, unknown> | null;
    signal?: AbortSignal;
    budget?: CheckBudget;
  },
): Promise<EnvironmentSource> {
  const { budget, signal } = options;
  const verifier = options.verifier ?? null;
  const local = isUrl(path) ? null : options.readLocal(path);
  try {
    if (local) return await environmentSourceFromFile(local, path, { verifier, budget, signal });
    budget?.begin(`downloading ${path}`);
    const download = fetchEnvironmentFile(path, { signal: budget?.signal ?? signal });
    const { bytes, fileName } = await (budget ? budget.race(download) : download);
    return await environmentSourceFromFile(bytes, fileName, { verifier, budget, signal });
  } catch (e) {
    if (e instanceof CheckTimeoutError) throw e;
    throw new Error(`${path}: ${(e as Error).message}`, { cause: e });
  }
}

/** The environments kept in the store by `spindle envs add`. */
export async function storedEnvironmentSources(store: Store): Promise<EnvironmentSource[]> {
  return (await listEnvironmentRecords(store)).map((r) => r.source);
}

/**
 * Installs the user environments an operation uses and returns the config with them named in
 * `tasks.environments` (files are added when not named), plus their sources for the run record. An
 * environment name that is neither built in, nor in a file, nor among `stored` fails, listing the known ones.
 */
export async function resolveUserEnvironments(
  config: RunConfig,
  options: { files?: string[]; stored: EnvironmentSource[]; readLocal: ReadLocal; signal?: AbortSignal },
): Promise<{ config: RunConfig; sources: EnvironmentSource[] }> {
  const c = structuredClone(config);
  const read = (path: string) =>
    readEnvironmentSource(path, {
      readLocal: options.readLocal,
      verifier: c.tasks.verifier as Record<string, unknown> | null,
      signal: options.signal,
    });
  const sources: EnvironmentSource[] = [];
  for (const path of [
    ...(c.tasks.task_file ? [c.tasks.task_file] : []),
    ...c.tasks.env_files,
    ...(options.files ?? []),
  ]) {
    const source = await read(path);
    if (!c.tasks.environments.includes(source.name)) c.tasks.environments.push(source.name);
    sources.push(source);
  }
  for (const name of c.tasks.environments) {
    if (isBuiltinEnvironment(name) || sources.some((s) => s.name === name)) continue;
    const source = options.stored.find((s) => s.name === name);
    if (!source) {
      const known = [...describeEnvironments().map((e) => e.name), ...options.stored.map((s) => s.name)];
      throw new Error(
        `Unknown environment "${name}". Known: ${[...new Set(known)].sort().join(', ')}. Add your own with \`spindle envs add FILE\` or --env-file FILE.`,
      );
    }
    sources.push(source);
  }
  for (const source of sources) {
    try {
      await installEnvironmentSource(source);
    } catch (e) {
      throw new Error(`environment ${source.name}${source.file ? ` (${source.file})` : ''}: ${(e as Error).message}`, {
        cause: e,
      });
    }
  }
  return { config: c, sources };
}

/** Installs the environments a stored run recorded (its own files), so it can be resumed or evaluated. */
export async function installRunEnvironments(sources: readonly EnvironmentSource[] | undefined): Promise<void> {
  for (const source of sources ?? []) await installEnvironmentSource(source);
}
