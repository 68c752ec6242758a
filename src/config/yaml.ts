/**
 * The run config as YAML: parse with line numbers for errors, write with the sections in a fixed
 * order, and edit one key in place (`spindle config set reward_scale 2.5`), keeping comments.
 * The same text runs in the app and the CLI.
 */
import { isMap, isScalar, LineCounter, parseDocument, stringify, visit, type Document } from 'yaml';
import { DEFAULT_CONFIG, type RunConfig } from './schema.ts';
import {
  validateRunConfig,
  checkField,
  suggest,
  MAX_ERRORS,
  type ConfigError,
  type ValidationResult,
} from './validate.ts';
import { FIELD_RULES } from './rules.ts';
import { clip } from './show.ts';

export type { ConfigError } from './validate.ts';

export interface ParseOptions {
  knownEnvironments?: readonly string[];
}

/** A run config is a page of settings; these bounds keep a hostile file from costing minutes or gigabytes. */
const YAML_LIMITS = { maxChars: 256 * 1024, maxKeys: 2000, maxAliases: 50, maxErrors: MAX_ERRORS } as const;

export function parseRunConfigYaml(text: string, options: ParseOptions = {}): ValidationResult {
  const refuse = (message: string, line?: number): ValidationResult => ({
    config: null,
    errors: [{ path: '', line, message }],
  });
  if (text.length > YAML_LIMITS.maxChars)
    return refuse(`the config is ${text.length} characters; a run config may have at most ${YAML_LIMITS.maxChars}`);
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  if (doc.errors.length) {
    const errors = doc.errors.map((e) => ({
      path: '',
      line: lineCounter.linePos(e.pos[0]).line,
      message: syntaxMessage(e.message),
    }));
    const distinct = errors.filter(
      (e, i) => errors.findIndex((f) => f.line === e.line && f.message === e.message) === i,
    );
    return { config: null, errors: distinct.slice(0, YAML_LIMITS.maxErrors) };
  }
  let keys = 0;
  let aliases = 0;
  let tooMany: { what: string; offset?: number } | null = null;
  visit(doc, {
    Pair: (_k, pair) => {
      if (++keys <= YAML_LIMITS.maxKeys) return undefined;
      tooMany = {
        what: `more than ${YAML_LIMITS.maxKeys} keys`,
        offset: isScalar(pair.key) ? pair.key.range?.[0] : undefined,
      };
      return visit.BREAK;
    },
    Alias: (_k, alias) => {
      if (++aliases <= YAML_LIMITS.maxAliases) return undefined;
      tooMany = { what: `more than ${YAML_LIMITS.maxAliases} aliases (*name)`, offset: alias.range?.[0] };
      return visit.BREAK;
    },
  });
  const found = tooMany as { what: string; offset?: number } | null;
  if (found)
    return refuse(
      `the config has ${found.what}; a run config needs far fewer`,
      found.offset === undefined ? undefined : lineCounter.linePos(found.offset).line,
    );
  let value: unknown;
  try {
    // Each alias may expand to a large node: yaml's own count of expanded aliases bounds the bomb.
    value = doc.toJS({ maxAliasCount: YAML_LIMITS.maxAliases });
  } catch (e) {
    return refuse(
      `YAML aliases expand too far (${(e as Error).message}); write the values out instead of nesting aliases`,
      firstAliasLine(doc, lineCounter),
    );
  }
  const result = validateRunConfig(value, options);
  for (const error of result.errors) error.line = lineOf(doc, lineCounter, error.path);
  return result;
}

/** The parser's message, first line; its own stack running out means lists or mappings nested far too deep. */
function syntaxMessage(message: string): string {
  if (/call stack/i.test(message))
    return 'the config nests lists or mappings too deeply for the YAML parser; a run config nests a few levels at most';
  return `YAML syntax: ${message.split('\n')[0]}`;
}

function firstAliasLine(doc: Document, counter: LineCounter): number | undefined {
  let offset: number | undefined;
  visit(doc, {
    Alias: (_k, alias) => {
      offset = alias.range?.[0];
      return visit.BREAK;
    },
  });
  return offset === undefined ? undefined : counter.linePos(offset).line;
}

function lineOf(doc: Document, counter: LineCounter, path: string): number | undefined {
  const keys = path
    .split('.')
    .filter(Boolean)
    .map((k) => (/^\d+$/.test(k) ? Number(k) : k));
  for (let n = keys.length; n > 0; n--) {
    const node = doc.getIn(keys.slice(0, n), true) as { range?: [number, number, number] } | undefined;
    if (node?.range) return counter.linePos(node.range[0]).line;
    // A key whose value is missing or unknown: find the key scalar in the parent map.
    const parent = n > 1 ? doc.getIn(keys.slice(0, n - 1), true) : doc.contents;
    if (isMap(parent)) {
      const pair = parent.items.find((p) => isScalar(p.key) && p.key.value === keys[n - 1]);
      const range = pair && isScalar(pair.key) ? pair.key.range : undefined;
      if (range) return counter.linePos(range[0]).line;
    }
  }
  return undefined;
}

const SECTION_NOTES: Partial<Record<keyof RunConfig, string>> = {
  model: 'the policy: a shipped model name, a models/ folder or a Hugging Face layout URL',
  training: 'GRPO or SFT; batch_size counts groups (tasks) per update, group_size samples per task',
  trajectory_collection: 'rollout workers (null = one per core), steps per episode, tool timeout',
  judge: 'judges vote on each trajectory; the combined score is their trimmed mean',
  tasks: 'environments to train on and the difficulty range the curriculum moves through',
};

/** Writes a full config as YAML, the keys in `order` first, each section with a one-line note. */
export function stringifyRunConfig(config: RunConfig): string {
  const order: (keyof RunConfig)[] = ['name', 'seed', 'model', 'training', 'trajectory_collection', 'judge', 'tasks'];
  const keys = [...order, ...(Object.keys(config) as (keyof RunConfig)[]).filter((k) => !order.includes(k))];
  return keys
    .map((key) => {
      const body = stringify({ [key]: config[key] }, { lineWidth: 0 });
      const note = SECTION_NOTES[key];
      return note ? `# ${note}\n${body}` : body;
    })
    .join('');
}

/** Resolves a bare key like `reward_scale` to its full path (`training.reward_scale`) when unambiguous. */
export function resolveConfigKey(key: string): string {
  const leaves = leafPaths(DEFAULT_CONFIG as unknown as Record<string, unknown>, '');
  if (leaves.includes(key)) return key;
  const matches = leaves.filter((p) => p.endsWith(`.${key}`));
  if (matches.length === 1) return matches[0];
  if (matches.length > 1) throw new Error(`"${key}" is ambiguous: ${matches.join(', ')}. Use the full path.`);
  const hint =
    suggest(key, leaves) ??
    suggest(
      key,
      leaves.map((p) => p.split('.').pop()!),
    );
  throw new Error(`Unknown config key "${clip(key)}".${hint ? ` Did you mean "${hint}"?` : ''}`);
}

function leafPaths(obj: Record<string, unknown>, prefix: string): string[] {
  return Object.entries(obj).flatMap(([k, v]) => {
    const path = prefix ? `${prefix}.${k}` : k;
    // A mapping with a rule of its own (tasks.levels, tasks.verifier) is one value, not a section.
    const isSection = typeof v === 'object' && v !== null && !Array.isArray(v) && FIELD_RULES[path] === undefined;
    return isSection ? leafPaths(v as Record<string, unknown>, path) : [path];
  });
}

/** Parses a command-line value: YAML scalars and flow collections (`2.5`, `null`, `[1, 3]`, `adamw`). */
function parseValue(raw: string): unknown {
  const doc = parseDocument(raw);
  return doc.errors.length ? raw : doc.toJS();
}

/** Sets one key in YAML text, keeping the rest (and its comments); throws with the validator's message. */
export function setConfigValue(text: string, key: string, rawValue: string, options: ParseOptions = {}): string {
  const path = resolveConfigKey(key);
  if (rawValue.length > YAML_LIMITS.maxChars)
    throw new Error(
      `The value is ${rawValue.length} characters; a run config may have at most ${YAML_LIMITS.maxChars}.`,
    );
  const value = parseValue(rawValue);
  const fallback = path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], DEFAULT_CONFIG);
  const problem = checkField(path, value, fallback);
  if (problem) throw new Error(problem);
  const doc: Document = parseDocument(text);
  if (doc.errors.length) throw new Error(`The config file is not valid YAML: ${doc.errors[0].message.split('\n')[0]}`);
  if (doc.contents === null) doc.contents = doc.createNode({});
  doc.setIn(path.split('.'), value);
  const updated = doc.toString({ lineWidth: 0 });
  const check = parseRunConfigYaml(updated, options);
  if (check.errors.length) throw new Error(formatConfigErrors(check.errors));
  return updated;
}

export function formatConfigErrors(errors: ConfigError[], file = 'config'): string {
  return errors.map((e) => `${file}${e.line ? `:${e.line}` : ''}: ${e.message}`).join('\n');
}
