/**
 * Config checks refuse what a run could not survive, in a message of a few lines: every number has a
 * lower and an upper bound the message names; a value echoed in a message is cut to 200 characters; a
 * hostile mapping is a page of errors, not megabytes; nesting too deep for the YAML parser is said so.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import { FIELD_RULES, JUDGE_NUMBER_RULES } from '../../src/config/rules.ts';
import { show, SHOWN_CHARS } from '../../src/config/show.ts';
import { MAX_ERRORS, validateRunConfig } from '../../src/config/validate.ts';
import { parseRunConfigYaml, setConfigValue } from '../../src/config/yaml.ts';

/** Dotted paths of the config's leaves, with their defaults (a field with a rule is one leaf). */
function leaves(value: unknown, prefix = ''): [string, unknown][] {
  if (value && typeof value === 'object' && !Array.isArray(value) && !FIELD_RULES[prefix]) {
    return Object.entries(value).flatMap(([k, v]) => leaves(v, prefix ? `${prefix}.${k}` : k));
  }
  return [[prefix, value]];
}

/** A partial config setting `path` to `value`. */
function setting(path: string, value: unknown): Record<string, unknown> {
  return path.split('.').reduceRight<unknown>((inner, key) => ({ [key]: inner }), value) as Record<string, unknown>;
}

describe('numeric bounds', () => {
  it('refuses a group size of 99999999999999999999999 at its line, naming the range', () => {
    const { config, errors } = parseRunConfigYaml('training:\n  group_size: 99999999999999999999999\n');
    expect(config).toBeNull();
    expect(errors).toEqual([
      {
        path: 'training.group_size',
        line: 2,
        message: '"training.group_size" is 1e+23; allowed: a whole number ≥ 2 and ≤ 256.',
      },
    ]);
  });

  const numeric = leaves(DEFAULT_CONFIG).filter(
    ([path, v]) => typeof v === 'number' || FIELD_RULES[path]?.kind === 'int' || FIELD_RULES[path]?.kind === 'number',
  );

  it.each(numeric)('%s has both bounds, holds its default, and refuses 1e23 by them', (path, fallback) => {
    const rule = FIELD_RULES[path];
    expect(rule?.kind === 'int' || rule?.kind === 'number', `${path} has no numeric rule`).toBe(true);
    if (rule?.kind !== 'int' && rule?.kind !== 'number') return;
    expect(Number.isFinite(rule.min) && Number.isFinite(rule.max) && rule.min < rule.max).toBe(true);
    if (typeof fallback === 'number') expect(fallback >= rule.min && fallback <= rule.max).toBe(true);
    const problem = validateRunConfig(setting(path, 1e23)).errors.find((e) => e.path === path);
    expect(problem?.message).toBe(
      `"${path}" is 1e+23; allowed: ${rule.kind === 'int' ? 'a whole number ' : ''}${'exclusiveMin' in rule && rule.exclusiveMin ? '>' : '≥'} ${rule.min} and ≤ ${rule.max}.`,
    );
  });

  it("bounds the judges' numbers too", () => {
    const judge = { type: 'remote', id: 'r', base_url: 'http://127.0.0.1:9/v1', model: 'm' };
    const errors = validateRunConfig({
      judge: { judges: [{ ...judge, max_concurrency: 1e9, timeout_ms: 2.5, temperature: 7, max_retries: -1 }] },
    }).errors;
    expect(errors.map((e) => e.message)).toEqual([
      `"judge.judges.0.temperature" is 7; allowed: ≥ 0 and ≤ ${JUDGE_NUMBER_RULES.temperature.max}.`,
      '"judge.judges.0.timeout_ms" must be a whole number (≥ 1 and ≤ 600000), got 2.5.',
      '"judge.judges.0.max_concurrency" is 1000000000; allowed: a whole number ≥ 1 and ≤ 64.',
      '"judge.judges.0.max_retries" is -1; allowed: a whole number ≥ 0 and ≤ 20.',
    ]);
  });
});

describe('messages stay short', () => {
  it('echoes at most 200 characters of a value and says how long it was', () => {
    expect(show('x'.repeat(50))).toBe(JSON.stringify('x'.repeat(50)));
    const long = show('y'.repeat(10_000));
    expect(long).toBe(`"${'y'.repeat(SHOWN_CHARS - 1)}… (10002 characters)`);
    const deep = JSON.parse('['.repeat(20_000) + ']'.repeat(20_000));
    expect(show(deep).length).toBeLessThan(300); // deeper than JSON.stringify goes: still a short text, no throw
  });

  it('levels with 100,000 entries give a page of errors, not a 589 KB echo', () => {
    const invalid = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`env_${i}`, 9]));
    const { errors } = validateRunConfig({ tasks: { levels: invalid } });
    expect(errors).toHaveLength(1);
    expect(errors[0].message).toMatch(
      /^"tasks.levels" must map environment names to whole-number levels 1–5 \(e\.g\. \{arith_tool: 3\}\), got \{"env_0":9,.*… \(\d+ characters\)\.$/,
    );
    expect(errors[0].message.length).toBeLessThan(400);

    const strangers = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`env_${i}`, 1]));
    const many = validateRunConfig({ tasks: { levels: strangers } }).errors;
    expect(many.slice(0, 5).map((e) => e.path)).toEqual(
      ['env_0', 'env_1', 'env_2', 'env_3', 'env_4'].map((e) => `tasks.levels.${e}`),
    );
    expect(many[5].message).toBe('"tasks.levels" names 99995 more environments that are not in "tasks.environments".');
    expect(JSON.stringify(many).length).toBeLessThan(2000);

    const refusal = (entries: number) => {
      try {
        setConfigValue('', 'tasks.levels', `{${Array.from({ length: entries }, (_, i) => `env_${i}: 9`).join(', ')}}`);
        return '';
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(refusal(10_000)).toMatch(/^"tasks.levels" must map environment names .*… \(\d+ characters\)\.$/);
    expect(refusal(100_000)).toMatch(/^The value is \d+ characters; a run config may have at most 262144\.$/);
  });

  it('a config with thousands of problems reports the first ones and counts the rest', () => {
    const { errors } = validateRunConfig(
      { tasks: { environments: Array.from({ length: 5000 }, (_, i) => `nope_${i}`) } },
      { knownEnvironments: ['arith_tool'] },
    );
    expect(errors).toHaveLength(MAX_ERRORS);
    expect(errors.at(-1)!.message).toBe(`… and ${5000 - MAX_ERRORS + 1} more problems.`);
  });

  it('an unknown key of 100,000 characters is named by its first 200', () => {
    const { errors } = validateRunConfig({ training: { ['k'.repeat(100_000)]: 1 } });
    expect(errors[0].message.length).toBeLessThan(600);
    expect(errors[0].message).toContain('… (100009 characters)'); // "training." and the key
  });

  it('says a config nested deeper than the YAML parser goes is nested too deeply, once, at its line', () => {
    const { errors } = parseRunConfigYaml(`name: deep\ntasks:\n  levels: ${'['.repeat(5000)}${']'.repeat(5000)}\n`);
    expect(errors).toEqual([
      {
        path: '',
        line: 3,
        message:
          'the config nests lists or mappings too deeply for the YAML parser; a run config nests a few levels at most',
      },
    ]);
  });
});

describe('config set on a mapping field', () => {
  it('sets tasks.levels, a mapping with a rule of its own', () => {
    const text = setConfigValue('tasks:\n  environments: [arith_tool]\n', 'tasks.levels', '{arith_tool: 3}');
    expect(parseRunConfigYaml(text).config!.tasks.levels).toEqual({ arith_tool: 3 });
  });
});
