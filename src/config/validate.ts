/**
 * Validates a user's (partial) run config against DEFAULT_CONFIG and FIELD_RULES and merges it onto
 * the defaults. Every error names the field, the value given and what is allowed; unknown fields get a
 * "did you mean" suggestion. Pure: no I/O, no YAML (see yaml.ts for line numbers).
 */
import { DEFAULT_CONFIG, type JudgeConfig, type RunConfig } from './schema.ts';
import { checkVerifier, type VerifierConfig } from './verifier.ts';
import { calibrationMapsProblem } from './calibration.ts';
import { clip, show } from './show.ts';
import {
  RETIRED_FIELDS,
  FIELD_RULES,
  JUDGE_NUMBER_RULES,
  JUDGE_TYPES,
  type FieldRule,
  type NumberRule,
} from './rules.ts';

export interface ConfigError {
  /** Dotted path of the field, e.g. `training.learning_rate`. */
  path: string;
  message: string;
  /** 1-based line in the YAML source, when known. */
  line?: number;
}

export interface ValidationResult {
  config: RunConfig | null;
  errors: ConfigError[];
}

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Validates `input` (already parsed from YAML/JSON) and returns the full config or the errors. */
export function validateRunConfig(
  input: unknown,
  options: { knownEnvironments?: readonly string[] } = {},
): ValidationResult {
  const errors: ConfigError[] = [];
  if (input === null || input === undefined) return { config: structuredClone(DEFAULT_CONFIG), errors };
  if (!isPlain(input))
    return {
      config: null,
      errors: [{ path: '', message: `The config must be a mapping of sections, got ${show(input)}.` }],
    };
  const merged = mergeSection(DEFAULT_CONFIG as unknown as Plain, input, '', errors) as unknown as RunConfig;
  checkCrossField(merged, errors, options);
  return errors.length ? { config: null, errors: capErrors(errors) } : { config: merged, errors };
}

/** Errors reported at most (the last of them counting the rest): a hostile config gets a page, not megabytes. */
export const MAX_ERRORS = 20;

function capErrors(errors: ConfigError[]): ConfigError[] {
  if (errors.length <= MAX_ERRORS) return errors;
  return [
    ...errors.slice(0, MAX_ERRORS - 1),
    { path: '', message: `… and ${errors.length - MAX_ERRORS + 1} more problems.` },
  ];
}

function mergeSection(defaults: Plain, given: Plain, prefix: string, errors: ConfigError[]): Plain {
  const out: Plain = structuredClone(defaults);
  for (const [key, value] of Object.entries(given)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (RETIRED_FIELDS[path]) {
      errors.push({
        path,
        message: `"${path}" was removed: it did nothing (${RETIRED_FIELDS[path]}). Delete the line.`,
      });
      continue;
    }
    if (!(key in defaults)) {
      const hint = suggest(key, Object.keys(defaults));
      errors.push({
        path,
        message: `Unknown field "${clip(path)}".${hint ? ` Did you mean "${prefix ? prefix + '.' : ''}${hint}"?` : ''} Allowed here: ${Object.keys(defaults).join(', ')}.`,
      });
      continue;
    }
    if (path === 'judge.judges') {
      out[key] = checkJudges(value, errors);
      continue;
    }
    if (path === 'judge.calibration') {
      const problem = checkField(path, value, defaults[key]);
      if (problem) errors.push({ path, message: problem });
      else out[key] = value;
      continue;
    }
    if (path === 'tasks.verifier') {
      const checked = checkVerifierField(value, path);
      errors.push(...checked.errors);
      out[key] = checked.verifier;
      continue;
    }
    const fallback = defaults[key];
    if (isPlain(fallback) && FIELD_RULES[path] === undefined) {
      if (!isPlain(value))
        errors.push({ path, message: `"${path}" must be a section (a mapping of fields), got ${show(value)}.` });
      else out[key] = mergeSection(fallback, value, path, errors);
      continue;
    }
    const problem = checkField(path, value, fallback);
    if (problem) errors.push({ path, message: problem });
    else out[key] = value;
  }
  return out;
}

/** Returns an error message, or null when `value` is acceptable for the field. */
export function checkField(path: string, value: unknown, fallback: unknown): string | null {
  if (path === 'tasks.verifier')
    return (
      checkVerifierField(value, path)
        .errors.map((e) => e.message)
        .join(' ') || null
    );
  if (path === 'judge.calibration') {
    const problem = calibrationMapsProblem(value);
    return problem ? `"${path}" ${problem}.` : null;
  }
  const rule: FieldRule | undefined = FIELD_RULES[path];
  if (!rule) {
    const want = fallback === null ? 'string or null' : Array.isArray(fallback) ? 'list' : typeof fallback;
    const ok =
      fallback === null
        ? value === null || typeof value === 'string'
        : Array.isArray(fallback)
          ? Array.isArray(value)
          : typeof value === typeof fallback;
    return ok ? null : `"${path}" must be a ${want}, got ${show(value)}.`;
  }
  if (value === null && 'nullable' in rule && rule.nullable) return null;
  switch (rule.kind) {
    case 'enum':
      return rule.values.includes(value as string)
        ? null
        : `"${path}" is ${show(value)}; allowed: ${rule.values.join(', ')}${rule.hint ? ` (${rule.hint})` : ''}.`;
    case 'int':
    case 'number':
      return checkNumber(path, value, rule);
    case 'string':
      if (typeof value !== 'string')
        return `"${path}" must be ${rule.nullable ? 'a string or null' : 'a string'}, got ${show(value)}.`;
      if (rule.pattern && !rule.pattern.test(value))
        return `"${path}" is ${show(value)}; expected ${rule.hint ?? rule.pattern}.`;
      return null;
    case 'strings': {
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'string'))
        return `"${path}" must be a list of strings, got ${show(value)}.`;
      const unknown = rule.values ? value.filter((v) => !rule.values!.includes(v)) : [];
      if (!unknown.length) return null;
      const more = unknown.length > 5 ? ` and ${unknown.length - 5} more` : '';
      return `"${path}" has ${unknown.slice(0, 5).map(show).join(', ')}${more}; allowed: ${rule.values!.join(', ')}.`;
    }
    case 'range': {
      const ok =
        Array.isArray(value) &&
        value.length === 2 &&
        value.every((v) => Number.isInteger(v) && v >= rule.min && v <= rule.max) &&
        value[0] <= value[1];
      return ok
        ? null
        : `"${path}" must be [low, high] with whole numbers ${rule.min}–${rule.max} and low ≤ high, got ${show(value)}.`;
    }
    case 'levels': {
      const ok =
        isPlain(value) &&
        Object.values(value).every(
          (v) => Number.isInteger(v) && (v as number) >= rule.min && (v as number) <= rule.max,
        );
      return ok
        ? null
        : `"${path}" must map environment names to whole-number levels ${rule.min}–${rule.max} (e.g. {arith_tool: 3}), got ${show(value)}.`;
    }
  }
}

/** A number inside its rule's bounds (a whole number for `int`); the message names the range allowed. */
function checkNumber(path: string, value: unknown, rule: NumberRule): string | null {
  const whole = rule.kind === 'int' ? 'a whole number ' : '';
  const range = `${rule.kind === 'number' && rule.exclusiveMin ? '>' : '≥'} ${rule.min} and ≤ ${rule.max}`;
  if (typeof value !== 'number' || !Number.isFinite(value))
    return `"${path}" must be ${whole ? whole.trim() : 'a number'} (${range}), got ${show(value)}.`;
  if (rule.kind === 'int' && !Number.isInteger(value))
    return `"${path}" must be a whole number (${range}), got ${show(value)}.`;
  const belowMin = rule.kind === 'number' && rule.exclusiveMin ? value <= rule.min : value < rule.min;
  return belowMin || value > rule.max ? `"${path}" is ${show(value)}; allowed: ${whole}${range}.` : null;
}

const ENDPOINT_FIELDS = {
  id: 'string',
  base_url: 'string',
  model: 'string',
  api_key_env: 'string|null',
  temperature: 'number',
  timeout_ms: 'number',
  max_concurrency: 'number',
  max_retries: 'number',
} as const;
const JUDGE_FIELDS: Record<JudgeConfig['type'], Record<string, 'string' | 'number' | 'string|null' | 'criteria'>> = {
  rule: { id: 'string' },
  remote: ENDPOINT_FIELDS,
  model: { id: 'string', path: 'string' },
  self: { id: 'string' },
  rubric: { ...ENDPOINT_FIELDS, criteria: 'criteria', scale: 'number' },
  group: { ...ENDPOINT_FIELDS, rubric: 'string' },
};
const REMOTE_DEFAULTS = { api_key_env: null, temperature: 0, timeout_ms: 30_000, max_concurrency: 4, max_retries: 3 };
const JUDGE_DEFAULTS: Partial<Record<JudgeConfig['type'], Plain>> = {
  remote: REMOTE_DEFAULTS,
  rubric: { ...REMOTE_DEFAULTS, scale: 10 },
  group: { ...REMOTE_DEFAULTS, rubric: '' },
};

/**
 * A rubric judge's `criteria`: a non-empty list of {name, description, weight ≥ 0}, names unique, some
 * weight above 0. The message says what to fix; the rubric judge and the Judges screen check with it too.
 */
export function criteriaProblem(value: unknown): string | null {
  const example = 'e.g. [{name: correctness, description: "the answer is right", weight: 2}]';
  if (!Array.isArray(value) || value.length === 0)
    return `needs "criteria": a list of {name, description, weight}, ${example}; got ${show(value)}.`;
  const names = new Set<string>();
  for (const [i, c] of value.entries()) {
    if (!isPlain(c)) return `criterion ${i} must be a mapping {name, description, weight}, got ${show(c)}.`;
    const extra = Object.keys(c).find((k) => !['name', 'description', 'weight'].includes(k));
    if (extra) return `criterion ${i} has an unknown field "${extra}"; allowed: name, description, weight.`;
    if (typeof c.name !== 'string' || c.name.trim() === '')
      return `criterion ${i} needs a "name" (a string), got ${show(c.name)}.`;
    if (names.has(c.name.trim().toLowerCase()))
      return `two criteria are named ${show(c.name)}; give each its own name.`;
    names.add(c.name.trim().toLowerCase());
    if (typeof c.description !== 'string')
      return `criterion ${show(c.name)} needs a "description" (what earns its points), got ${show(c.description)}.`;
    if (typeof c.weight !== 'number' || !Number.isFinite(c.weight) || c.weight < 0)
      return `criterion ${show(c.name)} needs a "weight" (a number ≥ 0), got ${show(c.weight)}.`;
  }
  if (!value.some((c) => (c as { weight: number }).weight > 0))
    return 'needs at least one criterion with a weight above 0.';
  return null;
}

function checkJudges(value: unknown, errors: ConfigError[]): JudgeConfig[] {
  if (!Array.isArray(value)) {
    errors.push({ path: 'judge.judges', message: `"judge.judges" must be a list of judges, got ${show(value)}.` });
    return [];
  }
  return value.flatMap((raw, i) => {
    const path = `judge.judges.${i}`;
    if (!isPlain(raw) || !JUDGE_TYPES.includes(raw.type as JudgeConfig['type'])) {
      errors.push({
        path: `${path}.type`,
        message: `Judge ${i} needs "type": one of ${JUDGE_TYPES.join(', ')}; got ${show(isPlain(raw) ? raw.type : raw)}.`,
      });
      return [];
    }
    const type = raw.type as JudgeConfig['type'];
    const judge: Plain = { ...JUDGE_DEFAULTS[type], id: type, ...raw };
    for (const [field, kind] of Object.entries(JUDGE_FIELDS[type])) {
      const v = judge[field];
      if (kind === 'criteria') {
        const problem = criteriaProblem(v);
        if (problem) errors.push({ path: `${path}.${field}`, message: `A rubric judge ${problem}` });
        continue;
      }
      const ok = kind === 'string|null' ? v === null || typeof v === 'string' : typeof v === kind;
      if (!ok)
        errors.push({
          path: `${path}.${field}`,
          message: `A ${type} judge needs "${field}" (${kind}), got ${show(v)}.`,
        });
      else if (kind === 'number' && JUDGE_NUMBER_RULES[field]) {
        const problem = checkNumber(`${path}.${field}`, v, JUDGE_NUMBER_RULES[field]);
        if (problem) errors.push({ path: `${path}.${field}`, message: problem });
      }
    }
    if (type === 'rubric' && typeof judge.scale === 'number' && !(judge.scale > 0)) {
      errors.push({
        path: `${path}.scale`,
        message: `"scale" (the points each criterion is scored out of) must be above 0, got ${show(judge.scale)}; e.g. 5 or 10.`,
      });
    }
    if (typeof judge.id === 'string' && judge.id.startsWith('env:')) {
      errors.push({
        path: `${path}.id`,
        message: `Judge id ${show(judge.id)} starts with "env:", which names the environment's own verifier vote; pick another id.`,
      });
    }
    for (const field of Object.keys(judge)) {
      if (field !== 'type' && !(field in JUDGE_FIELDS[type])) {
        const hint =
          field === 'api_key'
            ? ' Put the key in an environment variable or the app settings and name it in "api_key_env".'
            : '';
        errors.push({
          path: `${path}.${field}`,
          message: `Unknown field "${clip(field)}" for a ${type} judge; allowed: ${Object.keys(JUDGE_FIELDS[type]).join(', ')}.${hint}`,
        });
      }
    }
    return [judge as unknown as JudgeConfig];
  });
}

function checkCrossField(
  config: RunConfig,
  errors: ConfigError[],
  options: { knownEnvironments?: readonly string[] },
): void {
  if (config.curriculum.start_level > config.curriculum.max_level) {
    errors.push({
      path: 'curriculum.start_level',
      message: `"curriculum.start_level" (${config.curriculum.start_level}) is above "curriculum.max_level" (${config.curriculum.max_level}).`,
    });
  }
  if (options.knownEnvironments) {
    config.tasks.environments.forEach((env, i) => {
      if (!options.knownEnvironments!.includes(env)) {
        errors.push({
          path: `tasks.environments.${i}`,
          message: `Unknown environment ${show(env)}; known: ${options.knownEnvironments!.join(', ')}.`,
        });
      }
    });
  }
  const [low, high] = config.tasks.difficulty_range;
  let strangers = 0;
  for (const [env, level] of Object.entries(config.tasks.levels)) {
    if (!config.tasks.environments.includes(env)) {
      // A few by name, the rest counted: a mapping of 100,000 names is not 100,000 errors.
      if (++strangers <= 5)
        errors.push({
          path: `tasks.levels.${env}`,
          message: `"tasks.levels" names ${show(env)}, which is not in "tasks.environments" (${clip(config.tasks.environments.join(', '))}).`,
        });
    } else if (level < low || level > high) {
      errors.push({
        path: `tasks.levels.${env}`,
        message: `"tasks.levels.${env}" is ${level}, outside "tasks.difficulty_range" [${low}, ${high}]; widen the range or pick a level inside it.`,
      });
    }
  }
  if (strangers > 5)
    errors.push({
      path: 'tasks.levels',
      message: `"tasks.levels" names ${strangers - 5} more environments that are not in "tasks.environments".`,
    });
  const ids = config.judge.judges.map((j) => j.id);
  const dup = ids.find((id, i) => ids.indexOf(id) !== i);
  if (dup)
    errors.push({
      path: 'judge.judges',
      message: `Two judges share the id ${show(dup)}; give each judge its own "id".`,
    });
  if (config.judge.n_judges !== null && config.judge.n_judges > config.judge.judges.length) {
    errors.push({
      path: 'judge.n_judges',
      message: `"judge.n_judges" is ${config.judge.n_judges} but only ${config.judge.judges.length} judge(s) are listed in "judge.judges".`,
    });
  }
}

/**
 * `tasks.verifier`: null, a verifier name (`number`, normalised to `{type: number}`) or a mapping with
 * its settings, checked by the one verifier check (config/verifier.ts) the task-file reader uses too.
 */
export function checkVerifierField(
  value: unknown,
  path: string,
): { verifier: VerifierConfig | null; errors: ConfigError[] } {
  if (value === null) return { verifier: null, errors: [] };
  const { verifier, problems } = checkVerifier(value, path);
  return { verifier, errors: problems };
}

/** The closest name by edit distance, if it is close enough to be a plausible typo. */
export function suggest(name: string, candidates: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = editDistance(name.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return best !== null && bestDistance <= Math.max(2, Math.floor(name.length / 3)) ? best : null;
}

function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length];
}
