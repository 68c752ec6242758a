/**
 * A user's environment as data (issue 28): the module source or the task rows it was built from, so it
 * can travel where environments are needed (a rollout worker, a resumed run, an export's metadata) and
 * be rebuilt there identically. Built-in environments need no source; a user environment is installed
 * into the registry of each thread that uses it (`installEnvironmentSource`), once per content digest.
 */
import { hashString } from '../rng.ts';
import { stableJson } from './define.ts';
import { loadEnvironmentModule } from './module-env.ts';
import { getEnvironment, installEnvironment, isBuiltinEnvironment } from './registry.ts';
import type { Environment } from './types.ts';

export interface ModuleSource {
  kind: 'module';
  /** The environment's name (what the module's `name` says). */
  name: string;
  /** The module's JavaScript. */
  source: string;
  /** Where it came from (a file name), for messages and metadata; null when typed in the app. */
  file: string | null;
}

export type EnvironmentSource = ModuleSource;

/** A short content digest: two sources with the same digest build the same environment. */
export function sourceDigest(source: EnvironmentSource): string {
  const text = stableJson(source.kind === 'module' ? { kind: source.kind, source: source.source } : source);
  return [hashString(text), hashString(`spindle\u0000${text}`)].map((h) => h.toString(16).padStart(8, '0')).join('');
}

/** What the exports' metadata and a run record say about a user environment. */
export function describeSource(source: EnvironmentSource): { name: string; kind: string; file: string | null; digest: string } {
  return { name: source.name, kind: source.kind, file: source.file, digest: sourceDigest(source) };
}

/** Builds the environment a source describes, not registering it; `close` frees its sandbox context. */
export async function buildEnvironment(source: EnvironmentSource): Promise<{ env: Environment; close(): void }> {
  const built = await loadEnvironmentModule(source.source, { fileName: source.file?.split(/[\\/]/).pop() ?? `${source.name}.js` });
  if (built.env.name !== source.name) {
    built.close();
    throw new Error(`The module names itself "${built.env.name}" but was stored as "${source.name}"; save it again`);
  }
  return built;
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
  if (isBuiltinEnvironment(source.name)) throw new Error(`"${source.name}" is a built-in environment; give your environment another name`);
  const digest = sourceDigest(source);
  const current = installed.get(source.name);
  if (current?.digest === digest) return getEnvironment(source.name);
  const built = await buildEnvironment(source);
  installEnvironment(built.env, { replace: true });
  current?.close();
  installed.set(source.name, { digest, source, close: built.close });
  return built.env;
}

/** The source of an installed user environment (what a rollout job carries to its worker); undefined for built-ins. */
export function installedSource(name: string): EnvironmentSource | undefined {
  return installed.get(name)?.source;
}

/** Sources of the named environments that are user environments, in order (for a run record). */
export function installedSources(names: readonly string[]): EnvironmentSource[] {
  return names.flatMap((n) => installed.get(n)?.source ?? []);
}
