/**
 * The environment registry (`spindle envs --tag shell`): the built-in environments
 * plus any registered at run time from a user's spec. Lookups fail
 * with the list of known names; registration fails with every problem in the spec.
 */
import { defineEnvironment } from './define.ts';
import { BUILTIN_SPECS } from './builtins.ts';
import type { Environment, EnvironmentInfo, EnvironmentSpec } from './types.ts';

const registry = new Map<string, Environment>();
const builtinNames = new Set<string>();
for (const spec of BUILTIN_SPECS) {
  registry.set(spec.name, defineEnvironment(spec));
  builtinNames.add(spec.name);
}

/** Registered environments, optionally only those carrying a tag, sorted by name. */
export function listEnvironments(filter: { tag?: string } = {}): Environment[] {
  return [...registry.values()]
    .filter((e) => filter.tag === undefined || e.tags.includes(filter.tag))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** Plain summaries for display (CLI `list`, the UI picker). */
export function describeEnvironments(filter: { tag?: string } = {}): EnvironmentInfo[] {
  return listEnvironments(filter).map((e) => ({
    name: e.name,
    description: e.description,
    tags: [...e.tags],
    difficulties: [...e.difficulties],
    requiredTools: [...e.requiredTools],
  }));
}

/** The environment with this name; the error lists the known names. */
export function getEnvironment(name: string): Environment {
  const env = registry.get(name);
  if (!env)
    throw new Error(`Unknown environment "${name}". Known environments: ${[...registry.keys()].sort().join(', ')}`);
  return env;
}

export function hasEnvironment(name: string): boolean {
  return registry.has(name);
}

/** Every tag in use, sorted. */
export function listTags(): string[] {
  return [...new Set([...registry.values()].flatMap((e) => e.tags))].sort();
}

/**
 * Registers a user-defined environment. Throws `EnvironmentSpecError` listing every problem; a name
 * already taken is refused unless `replace` is set (built-ins can never be replaced).
 */
export function registerEnvironment(spec: EnvironmentSpec, options: { replace?: boolean } = {}): Environment {
  return installEnvironment(defineEnvironment(spec), options);
}

/** Registers an environment already built (a module's, sources.ts); the same rules as `registerEnvironment`. */
export function installEnvironment(env: Environment, options: { replace?: boolean } = {}): Environment {
  if (builtinNames.has(env.name))
    throw new Error(`"${env.name}" is a built-in environment and cannot be replaced; choose another name`);
  if (registry.has(env.name) && !options.replace) {
    throw new Error(`An environment named "${env.name}" is already registered; pass { replace: true } to replace it`);
  }
  registry.set(env.name, env);
  return env;
}

export function isBuiltinEnvironment(name: string): boolean {
  return builtinNames.has(name);
}

/** Removes a user-defined environment; returns whether it was registered. */
export function unregisterEnvironment(name: string): boolean {
  if (builtinNames.has(name)) throw new Error(`"${name}" is a built-in environment and cannot be removed`);
  return registry.delete(name);
}
