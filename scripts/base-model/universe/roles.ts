/**
 * What the families share: drawing one tool's surface (its role in the world), the wording of a task
 * (a list of templates whose last one is kept out of the build: the held-out task template), and the
 * errors that say what to fix.
 */
import type { Rng } from '../../../src/rng.ts';
import { nameStyle, paramName, phrase, toolName } from './surface.ts';

/** What a tool's `run` throws: the message the model reads, which says what to fix. */
export class ToolError extends Error {}

export type Naming = ReturnType<typeof nameStyle>;

export interface RoleSpec {
  /** Plain spellings of the tool's name. */
  words: string[];
  /** The key word prefixed and opaque styles build on. */
  stem: string;
  /** Description phrasings, `{x}` filled from `fill`. */
  descriptions: string[];
  fill?: Record<string, string>;
  /** Parameter role → name synonyms and its description. */
  params?: Record<string, { names: string[]; description: string; type?: 'string' | 'number' }>;
}

export interface DrawnTool {
  name: string;
  description: string;
  /** Parameter role → the name drawn for it. */
  params: Record<string, string>;
  /** Parameter name → description and type, as the schema shows it. */
  schema: Record<string, { type: 'string' | 'number'; description: string }>;
}

export function drawTool(rng: Rng, naming: Naming, taken: Set<string>, spec: RoleSpec): DrawnTool {
  const name = toolName(rng, naming, spec.words, spec.stem, taken);
  const description = phrase(rng, spec.descriptions, spec.fill);
  const params: Record<string, string> = {};
  const schema: DrawnTool['schema'] = {};
  for (const [role, p] of Object.entries(spec.params ?? {})) {
    const pName = paramName(rng, p.names);
    params[role] = pName;
    schema[pName] = { type: p.type ?? 'string', description: p.description };
  }
  return { name, description, params, schema };
}

/** Which task templates a world draws from: the build's, or only the held-out one. */
export type TemplateSet = 'build' | 'held_out';

/** A prompt from `templates`: the last is the held-out template, the rest are the build's. */
export function wording(rng: Rng, templates: string[], set: TemplateSet, fill: Record<string, string>): string {
  const pool = set === 'held_out' ? templates.slice(-1) : templates.slice(0, -1);
  return phrase(rng, pool, fill);
}

/** An argument as the tool reads it: a string, trimmed. */
export function arg(args: Record<string, unknown>, name: string): string {
  return String(args[name] ?? '').trim();
}

export function fail(message: string): never {
  throw new ToolError(message);
}

/** An integer argument, or an error that says what was expected. */
export function intArg(args: Record<string, unknown>, name: string, tool: string): number {
  const text = arg(args, name);
  if (!/^-?\d+$/.test(text)) fail(`${tool}: "${name}" must be a whole number, got "${text}"`);
  return Number(text);
}
