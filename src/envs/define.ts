/**
 * Turns an author's `EnvironmentSpec` into an `Environment`: validates the spec with errors that say
 * what is missing, and adds deterministic generation with disjoint train/test splits.
 *
 * Splits: an item's canonical key is hashed (with the environment name) to a number in [0, 1); below
 * `testFraction` it is a test item, in the next VALIDATION_FRACTION a validation item (what training
 * may look at to decide things, e.g. the safety monitor), otherwise train. `generate(seed, level, split)` draws items from a
 * seed-derived stream until one falls in the requested split, so a test item can never be generated
 * for train, whatever the seed. An item may pin its split instead (`TaskItem.split`: a task file's
 * explicit split column); it is then drawn only for that split.
 */
import { SYSTEM_PROMPT_STYLES, type Split, type Task, type Trajectory } from '../contracts.ts';
import { createRng, deriveSeed, hashString } from '../rng.ts';
import {
  ALL_LEVELS,
  KNOWN_TOOLS,
  MAX_PROMPT_CHARS,
  type EnvScore,
  type Environment,
  type EnvironmentSpec,
  type ToolboxSetup,
} from './types.ts';

const NAME_PATTERN = /^[a-z][a-z0-9_]*$/;
/** Draws before giving up on a split: with testFraction 0.2, 200 misses in a row means the item space is too small. */
const MAX_SPLIT_ATTEMPTS = 200;
/** Share of the item space held out for validation, after the test share. */
const VALIDATION_FRACTION = 0.1;
const SPLITS: readonly Split[] = ['train', 'validation', 'test'];
/**
 * The most luck an environment may declare (`EnvironmentSpec.chance`): beyond it a blind policy
 * succeeds so often that the environment teaches ignoring the task. A task file's luck is not declared
 * but measured from its rows (a four-choice file has 0.25), so it may be higher; it is still a rate.
 */
export const MAX_DECLARED_CHANCE = 0.1;

export class EnvironmentSpecError extends Error {
  constructor(
    readonly problems: string[],
    name: string,
  ) {
    super(`Environment ${name ? `"${name}"` : '(unnamed)'} is invalid:\n  - ${problems.join('\n  - ')}`);
    this.name = 'EnvironmentSpecError';
  }
}

/** Every problem with a spec, each naming the field and what it should be; empty when valid. */
export function validateEnvironmentSpec(spec: unknown): string[] {
  if (typeof spec !== 'object' || spec === null)
    return ['the environment must be an object with name, tags, requiredTools, sample and evaluate'];
  const s = spec as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof s.name !== 'string' || !NAME_PATTERN.test(s.name)) {
    problems.push(`"name" must be a snake_case string like "my_task" (got ${describe(s.name)})`);
  }
  if (typeof s.description !== 'string' || s.description.trim() === '')
    problems.push('"description" is missing: one sentence saying what the task asks');
  if (!Array.isArray(s.tags) || !s.tags.every((t) => typeof t === 'string' && t !== '')) {
    problems.push(`"tags" must be an array of non-empty strings, e.g. ["shell"] (got ${describe(s.tags)})`);
  }
  if (!Array.isArray(s.requiredTools)) {
    problems.push(
      `"requiredTools" must be an array of tool names from ${KNOWN_TOOLS.join(', ')} (use [] for none; got ${describe(s.requiredTools)})`,
    );
  } else {
    const unknown = s.requiredTools.filter((t) => !(KNOWN_TOOLS as readonly unknown[]).includes(t));
    if (unknown.length)
      problems.push(
        `"requiredTools" has unknown tools ${unknown.map(describe).join(', ')}; known tools: ${KNOWN_TOOLS.join(', ')}`,
      );
  }
  if (s.difficulties !== undefined) {
    const ok =
      Array.isArray(s.difficulties) &&
      s.difficulties.length > 0 &&
      s.difficulties.every((d) => (ALL_LEVELS as readonly unknown[]).includes(d));
    if (!ok)
      problems.push(`"difficulties" must be a non-empty array of levels from 1 to 5 (got ${describe(s.difficulties)})`);
  }
  if (s.systemStyle !== undefined && !(SYSTEM_PROMPT_STYLES as readonly unknown[]).includes(s.systemStyle)) {
    problems.push(
      `"systemStyle" must be one of ${SYSTEM_PROMPT_STYLES.map((v) => `"${v}"`).join(', ')} (got ${describe(s.systemStyle)})`,
    );
  }
  if (
    s.testFraction !== undefined &&
    !(typeof s.testFraction === 'number' && s.testFraction > 0 && s.testFraction <= 1 - VALIDATION_FRACTION - 0.1)
  ) {
    problems.push(
      `"testFraction" must be a number above 0 and at most ${(0.9 - VALIDATION_FRACTION).toFixed(1)}, leaving room for validation and train (got ${describe(s.testFraction)})`,
    );
  }
  if (typeof s.sample !== 'function')
    problems.push('"sample" is missing: a function (rng, difficulty) => { prompt, data, key? }');
  if (typeof s.evaluate !== 'function')
    problems.push('"evaluate" is missing: a function (task, trajectory) => score in [0, 1] or null');
  if (s.ownTools !== undefined) {
    if (!Array.isArray(s.ownTools)) problems.push('"ownTools" must be an array of tool schemas');
    else if (s.ownTools.length > 0 && typeof s.openTools !== 'function')
      problems.push('"openTools" is missing: a function (task, options) => session that runs the own tools');
  }
  for (const optional of ['expert', 'toolbox', 'chance'] as const) {
    if (s[optional] !== undefined && typeof s[optional] !== 'function')
      problems.push(`"${optional}" must be a function of the task when given`);
  }
  return problems;
}

/** A validated, split-aware environment from a spec; throws `EnvironmentSpecError` listing every problem. */
export function defineEnvironment(spec: EnvironmentSpec): Environment {
  const problems = validateEnvironmentSpec(spec);
  if (problems.length) throw new EnvironmentSpecError(problems, typeof spec?.name === 'string' ? spec.name : '');
  const difficulties = [...(spec.difficulties ?? ALL_LEVELS)].sort((a, b) => a - b);
  const testFraction = spec.testFraction ?? 0.2;
  const splitOf = (key: string): Split => {
    const h = hashString(`${spec.name}\u0000${key}`) / 4294967296;
    return h < testFraction ? 'test' : h < testFraction + VALIDATION_FRACTION ? 'validation' : 'train';
  };

  const env: Environment = {
    name: spec.name,
    description: spec.description,
    tags: [...spec.tags],
    difficulties,
    requiredTools: [...spec.requiredTools],
    // An environment's own tools are new to every model: their descriptions are what says which one does what.
    systemStyle: spec.systemStyle ?? (spec.ownTools?.length ? 'described' : 'compact'),
    instructions: spec.instructions,
    testFraction,
    splitOf,
    generate: (seed: number, difficulty: number, split: Split): Task =>
      generateTask(spec, difficulties, splitOf, seed, difficulty, split),
    async evaluate(task: Task, trajectory: Trajectory): Promise<EnvScore> {
      const score = await spec.evaluate(task, trajectory);
      if (score === null) return null;
      if (typeof score !== 'number' || !Number.isFinite(score) || score < 0 || score > 1) {
        throw new RangeError(
          `${spec.name}.evaluate returned ${describe(score)}; it must return a number in [0, 1] or null`,
        );
      }
      return score;
    },
    toolbox: (task: Task): ToolboxSetup => spec.toolbox?.(task) ?? {},
    ownTools: [...(spec.ownTools ?? [])],
    chance: (difficulty: number): number => {
      const luck = spec.chance?.(difficulty) ?? 0;
      if (typeof luck !== 'number' || !Number.isFinite(luck) || luck < 0 || luck > 1) {
        throw new RangeError(
          `${spec.name}.chance(${difficulty}) returned ${describe(luck)}; it must return a success rate, a number in [0, 1]`,
        );
      }
      return luck;
    },
  };
  if (spec.expert) env.expert = (task: Task) => spec.expert!(task);
  if (spec.openTools) env.openTools = (task, options) => spec.openTools!(task, options);
  return env;
}

/**
 * The spec's item for (seed, difficulty) in the split: drawn again (a new attempt's seed) until an item of that split
 * comes, as the item says or its key's hash decides.
 */
function generateTask(
  spec: EnvironmentSpec,
  difficulties: number[],
  splitOf: (key: string) => Split,
  seed: number,
  difficulty: number,
  split: Split,
): Task {
  if (!difficulties.includes(difficulty)) {
    throw new RangeError(
      `${spec.name}: difficulty ${difficulty} is not offered; choose one of ${difficulties.join(', ')}`,
    );
  }
  if (!SPLITS.includes(split))
    throw new RangeError(`${spec.name}: split must be one of ${SPLITS.join(', ')}, got ${describe(split)}`);
  for (let attempt = 0; attempt < MAX_SPLIT_ATTEMPTS; attempt++) {
    const item = spec.sample(createRng(deriveSeed(seed, spec.name, difficulty, attempt)), difficulty);
    if (typeof item?.prompt === 'string' && item.prompt.length > MAX_PROMPT_CHARS) {
      throw new RangeError(
        `${spec.name}: sample gave a prompt of ${item.prompt.length} characters, above the ${MAX_PROMPT_CHARS} a task's prompt ` +
          "may have; keep the question short and put what it needs in the task's files or tools",
      );
    }
    const key = item.key ?? stableJson(item.data);
    const itemSplit = item.split ?? splitOf(key);
    if (!SPLITS.includes(itemSplit))
      throw new RangeError(
        `${spec.name}: an item's split must be one of ${SPLITS.join(', ')}, got ${describe(itemSplit)}`,
      );
    if (itemSplit !== split) continue;
    return {
      id: `${spec.name}/${split}/${difficulty}/${seed}`,
      env: spec.name,
      split,
      difficulty,
      seed,
      prompt: item.prompt,
      data: { ...item.data, item_key: key },
    };
  }
  throw new Error(
    `${spec.name}: no ${split} item at difficulty ${difficulty} after ${MAX_SPLIT_ATTEMPTS} draws; the level's item space is too small for a ${split} split`,
  );
}

/** JSON with sorted object keys, so equal data always gives the same key. */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'function') return 'a function';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
