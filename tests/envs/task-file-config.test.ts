/**
 * `tasks.verifier` in the run config and a row's `verifier` go through the one check (config/verifier.ts):
 * the config's validator and the task-file reader give the same verdicts, messages and type.
 */
import { describe, expect, it } from 'vitest';
import type { VerifierConfig as ConfigVerifier } from '../../src/config/schema.ts';
import { checkVerifierField, validateRunConfig } from '../../src/config/validate.ts';
import { parseRunConfigYaml, setConfigValue } from '../../src/config/yaml.ts';
import { checkVerifier, type VerifierConfig as TaskFileVerifier } from '../../src/envs/task-file/verifiers.ts';

// One type, seen from both sides.
const toTaskFile = (v: ConfigVerifier): TaskFileVerifier => v;
const toConfig = (v: TaskFileVerifier): ConfigVerifier => v;

const CASES: unknown[] = [
  'exact',
  ' number ',
  'js',
  'fuzzy',
  42,
  ['number'],
  { type: 'exact', ignore_case: true },
  { type: 'exact', ignore_case: 'yes' },
  { type: 'contains', ignore_case: false },
  { type: 'number', abs_tol: 0.01, rel_tol: 0.001 },
  { type: 'number', abs_tol: -1 },
  { type: 'number', tolerance: 0.1 },
  { type: 'regex', pattern: '^\\d+$' },
  { type: 'regex', pattern: '(a)\\1' },
  { type: 'regex', pattern: '' },
  { type: 'choice', options: 4 },
  { type: 'choice', options: 6 },
  { type: 'choice', options: 2.5 },
  { type: 'js', source: '(a, row) => a === row.answer' },
  { type: 'js', source: '  ' },
  { type: 'js', source: 'f', timeout_ms: 5, memory_mb: 1000 },
  { type: 'js', source: 'f', timeout_ms: 500, memory_mb: 8 },
  { type: 'js' },
  { kind: 'number' },
];

describe('tasks.verifier', () => {
  it('the config and the task file accept and refuse the same verifiers, with the same messages', () => {
    expect(toConfig(toTaskFile({ type: 'number', abs_tol: 1 }))).toEqual({ type: 'number', abs_tol: 1 });
    for (const value of CASES) {
      const config = checkVerifierField(value, 'tasks.verifier');
      const taskFile = checkVerifier(value, 'tasks.verifier');
      expect([value, config.verifier]).toEqual([value, taskFile.verifier]);
      expect([value, config.errors]).toEqual([value, taskFile.problems]);
    }
  });

  it('defaults to null, takes a name or a mapping, and names the field and the fix when wrong', () => {
    expect(validateRunConfig({}).config!.tasks.verifier).toBeNull();
    expect(validateRunConfig({ tasks: { verifier: 'number' } }).config!.tasks.verifier).toEqual({ type: 'number' });
    const yaml = 'tasks:\n  task_file: data/gsm.jsonl\n  verifier:\n    type: number\n    abs_tol: 0.5\n';
    expect(parseRunConfigYaml(yaml).config!.tasks.verifier).toEqual({ type: 'number', abs_tol: 0.5 });

    const bad = validateRunConfig({ tasks: { verifier: { type: 'number', abs_tol: 'close' } } });
    expect(bad.config).toBeNull();
    expect(bad.errors).toEqual([
      {
        path: 'tasks.verifier.abs_tol',
        message: '"tasks.verifier.abs_tol" must be a number ≥ 0 (e.g. 0.01), got "close".',
      },
    ]);
    expect(validateRunConfig({ tasks: { verifier: 'fuzzy' } }).errors).toEqual([
      {
        path: 'tasks.verifier.type',
        message: '"tasks.verifier.type" is "fuzzy"; allowed: exact, number, contains, regex, choice, js.',
      },
    ]);
    const lined = parseRunConfigYaml('tasks:\n  verifier:\n    type: js\n');
    expect(lined.errors.map((e) => e.path)).toEqual(['tasks.verifier.source']);
  });

  it('can be set from the command line like any other key', () => {
    const text = setConfigValue('tasks:\n  task_file: data/gsm.jsonl\n', 'tasks.verifier', 'number');
    expect(parseRunConfigYaml(text).config!.tasks.verifier).toEqual({ type: 'number' });
    const mapped = setConfigValue('', 'tasks.verifier', '{type: choice, options: 4}');
    expect(parseRunConfigYaml(mapped).config!.tasks.verifier).toEqual({ type: 'choice', options: 4 });
    expect(() => setConfigValue('', 'tasks.verifier', 'fuzzy')).toThrow(/"tasks.verifier.type" is "fuzzy"/);
  });
});
