/**
 * A user's environment as data: the module source or the task rows it was built from, so it
 * can travel where environments are needed (a rollout worker, a resumed run, an export's metadata) and
 * be rebuilt there identically. Built-in environments need no source; a user environment is installed
 * into the registry of each thread that uses it (`installEnvironmentSource`), once per content digest.
 */
import type { EnvironmentSource } from '../contracts.ts';
import { hashString } from '../rng.ts';
import { defineEnvironment, stableJson } from './define.ts';
import { loadEnvironmentModule } from './module-env.ts';
import { CheckBudget, withCheckBudget } from './check-budget.ts';
import {
  readTaskFile,
  TaskFileError,
  taskFileSpec,
  type TaskFileSpec,
  type TaskRow,
  type VerifierConfig,
} from './task-file/index.ts';
import { getEnvironment, installEnvironment, isBuiltinEnvironment } from './registry.ts';
import type { Environment } from './types.ts';

/** A short content digest: two sources with the same digest build the same environment. */
export function sourceDigest(source: EnvironmentSource): string {
  const text = stableJson(
    source.kind === 'module'
      ? { kind: source.kind, source: source.source }
      : { kind: source.kind, rows: source.rows, verifier: source.verifier },
  );
  return [hashString(text), hashString(`spindle\u0000${text}`)].map((h) => h.toString(16).padStart(8, '0')).join('');
}

/** What the exports' metadata and a run record say about a user environment. */
export function describeSource(source: EnvironmentSource): {
  name: string;
  kind: string;
  file: string | null;
  digest: string;
} {
  return { name: source.name, kind: source.kind, file: source.file, digest: sourceDigest(source) };
}

/** Builds the environment a source describes, not registering it; `close` frees its sandbox context. */
export async function buildEnvironment(source: EnvironmentSource): Promise<{ env: Environment; close(): void }> {
  if (source.kind === 'tasks') return { env: defineEnvironment(taskSpecOf(source)), close: () => {} };
  const built = await loadEnvironmentModule(source.source, {
    fileName: source.file?.split(/[\\/]/).pop() ?? `${source.name}.js`,
  });
  if (built.env.name !== source.name) {
    built.close();
    throw new Error(`The module names itself "${built.env.name}" but was stored as "${source.name}"; save it again`);
  }
  return built;
}

/** Module files; anything else is read as a task file (JSONL, JSON, CSV, TSV, Parquet). */
const MODULE_FILE = /\.m?js$/i;

function taskSpecOf(source: Extract<EnvironmentSource, { kind: 'tasks' }>): TaskFileSpec {
  return taskFileSpec(source.name, source.rows as unknown as TaskRow[], {
    verifier: source.verifier as VerifierConfig | null,
  });
}

export interface SourceFileOptions {
  name?: string;
  verifier?: Record<string, unknown> | null;
  /** The budget of the check this reading is part of; without one, a budget of its own (CHECK_BUDGET_MS). */
  budget?: CheckBudget;
  /** Cancels a reading that has no `budget`. */
  signal?: AbortSignal;
}

/**
 * The source a file describes: a JavaScript module (its `name` read by loading it), or a task file
 * whose environment is named after the file (`word-problems.jsonl` → `word_problems`) unless `name` is
 * given. Checked by building it, a task file's js verifiers tried once each: every problem comes back as
 * the error (rows and fields named). It runs under a check's budget (check-budget.ts).
 */
export async function environmentSourceFromFile(
  content: Uint8Array | string,
  fileName: string,
  options: SourceFileOptions = {},
): Promise<EnvironmentSource> {
  if (options.budget) return sourceFromFile(content, fileName, options, options.budget);
  return withCheckBudget(undefined, { signal: options.signal }, (budget) =>
    sourceFromFile(content, fileName, options, budget),
  );
}

async function sourceFromFile(
  content: Uint8Array | string,
  fileName: string,
  options: SourceFileOptions,
  budget: CheckBudget,
): Promise<EnvironmentSource> {
  const file = fileName.split(/[\\/]/).pop() ?? fileName;
  if (MODULE_FILE.test(file)) {
    budget.begin(`loading ${file}`);
    const source = typeof content === 'string' ? content : new TextDecoder().decode(content);
    const built = await budget.open(loadEnvironmentModule(source, { fileName: file }));
    built.close();
    return { kind: 'module', name: built.env.name, source, file };
  }
  budget.begin(`reading ${file}`);
  const rows = await readTaskFile(content, file);
  const name = options.name ?? environmentNameFor(file);
  const source: Extract<EnvironmentSource, { kind: 'tasks' }> = {
    kind: 'tasks',
    name,
    rows: rows as unknown as Record<string, unknown>[],
    verifier: options.verifier ?? null,
    file,
  };
  const spec = taskSpecOf(source);
  defineEnvironment(spec);
  budget.begin(`trying the js verifiers of ${file}`);
  const problems = await budget.race(spec.tryVerifiers(() => budget.check()));
  if (problems.length) throw new TaskFileError(problems, file);
  return source;
}

/** `My Tasks-v2.jsonl` → `my_tasks_v2`: a registry name from a file name. */
export function environmentNameFor(fileName: string): string {
  const stem = fileName
    .replace(/\.[^.]+$/, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return /^[a-z]/.test(stem) ? stem : `tasks_${stem || 'file'}`;
}

interface Installed {
  digest: string;
  source: EnvironmentSource;
  close(): void;
}
const installed = new Map<string, Installed>();

/**
 * Makes `getEnvironment(source.name)` return this source's environment in this thread. The same content
 * is built once; new content replaces the old (its sandbox context is freed). Built-in names are refused.
 */
export async function installEnvironmentSource(source: EnvironmentSource): Promise<Environment> {
  if (isBuiltinEnvironment(source.name))
    throw new Error(`"${source.name}" is a built-in environment; give your environment another name`);
  const digest = sourceDigest(source);
  const current = installed.get(source.name);
  if (current?.digest === digest) return getEnvironment(source.name);
  const built = await buildEnvironment(source);
  installEnvironment(built.env, { replace: true });
  current?.close();
  installed.set(source.name, { digest, source, close: built.close });
  return built.env;
}

/**
 * Sources of the named environments that are user environments, in order: what a run record stores
 * and what configures a rollout worker (built-ins are known by name everywhere).
 */
export function installedSources(names: readonly string[]): EnvironmentSource[] {
  return names.flatMap((n) => installed.get(n)?.source ?? []);
}

export type { EnvironmentSource };
