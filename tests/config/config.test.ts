import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import { parseRunConfigYaml, setConfigValue, stringifyRunConfig, resolveConfigKey } from '../../src/config/yaml.ts';
import { presetConfig, PRESETS } from '../../src/config/presets.ts';

const SEED_STYLE = `
model:
  base_model: spindle-micro
training:
  max_steps: 1000
  batch_size: 8
  learning_rate: 1e-5
trajectory_collection:
  n_workers: 4
  max_steps_per_trajectory: 30
  tools: ["js", "calc", "sh"]
judge:
  n_judges: 1
tasks:
  environments: [arith_tool, js_debug]
  difficulty_range: [2, 4]
`;

describe('run config YAML', () => {
  it('reads a config of only the core sections and fills the rest from defaults', () => {
    const { config, errors } = parseRunConfigYaml(SEED_STYLE);
    expect(errors).toEqual([]);
    expect(config!.training).toMatchObject({
      max_steps: 1000,
      batch_size: 8,
      learning_rate: 1e-5,
      group_size: DEFAULT_CONFIG.training.group_size,
    });
    expect(config!.tasks.difficulty_range).toEqual([2, 4]);
    expect(config!.replay.online_ratio).toBe(0.7);
  });

  it('an empty file is the default config', () => {
    expect(parseRunConfigYaml('').config).toEqual(DEFAULT_CONFIG);
  });

  it('names the field, the value, what is allowed and the line', () => {
    const { config, errors } = parseRunConfigYaml(
      'training:\n  learning_rate: 5\n  optimizer: sgd\nmodel:\n  backend: tpu\n',
    );
    expect(config).toBeNull();
    expect(errors).toEqual([
      { path: 'training.learning_rate', line: 2, message: '"training.learning_rate" is 5; allowed: > 0 and ≤ 1.' },
      { path: 'training.optimizer', line: 3, message: '"training.optimizer" is "sgd"; allowed: adam, adamw.' },
      { path: 'model.backend', line: 5, message: '"model.backend" is "tpu"; allowed: auto, webgpu, wasm, cpu.' },
    ]);
  });

  it('reads a fixed level per environment and refuses one outside the range or for an unlisted environment', () => {
    const ok = parseRunConfigYaml(
      'tasks:\n  environments: [arith_tool, letter_count]\n  difficulty_range: [1, 3]\n  levels: {arith_tool: 3}\n',
    );
    expect(ok.errors).toEqual([]);
    expect(ok.config!.tasks.levels).toEqual({ arith_tool: 3 });
    const bad = parseRunConfigYaml(
      'tasks:\n  environments: [arith_tool]\n  difficulty_range: [1, 2]\n  levels: {arith_tool: 3, shell_exec: 1}\n',
    );
    expect(bad.errors.map((e) => e.path)).toEqual(['tasks.levels.arith_tool', 'tasks.levels.shell_exec']);
    expect(bad.errors[0].message).toContain('outside "tasks.difficulty_range" [1, 2]');
    expect(bad.errors[1].message).toContain('not in "tasks.environments"');
    expect(parseRunConfigYaml('tasks:\n  levels: {arith_tool: 2.5}\n').errors[0].message).toContain(
      'whole-number levels 1–5',
    );
  });

  it('suggests the intended name for a typo', () => {
    const { errors } = parseRunConfigYaml('training:\n  learnig_rate: 0.001\n');
    expect(errors[0].message).toContain('Did you mean "training.learning_rate"?');
    expect(errors[0].line).toBe(2);
  });

  it('reports YAML syntax errors with a line', () => {
    const { config, errors } = parseRunConfigYaml('training:\n  max_steps: [1, 2\n');
    expect(config).toBeNull();
    expect(errors[0].message).toMatch(/^YAML syntax/);
    expect(errors[0].line).toBeGreaterThan(0);
  });

  it('checks judges and refuses an inline API key', () => {
    const { errors } = parseRunConfigYaml(
      'judge:\n  judges:\n    - type: remote\n      id: gpt\n      base_url: http://x\n      model: m\n      api_key: sk-123\n    - type: oracle\n',
    );
    expect(errors.map((e) => e.path)).toEqual(['judge.judges.0.api_key', 'judge.judges.1.type']);
    expect(errors[0].message).toContain('api_key_env');
  });

  it('checks environments against the registry when given', () => {
    const { errors } = parseRunConfigYaml('tasks:\n  environments: [arith_tool, nope]\n', {
      knownEnvironments: ['arith_tool'],
    });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ path: 'tasks.environments.1', line: 2 });
  });

  it('round-trips through stringify', () => {
    const config = presetConfig('demo');
    const text = stringifyRunConfig(config);
    expect(text.indexOf('model:')).toBeLessThan(text.indexOf('replay:'));
    expect(parseRunConfigYaml(text).config).toEqual(config);
  });
});

describe('config set', () => {
  it('sets a bare key (config set reward_scale 2.5) and keeps comments', () => {
    const text = '# my run\ntraining:\n  max_steps: 10 # short\n';
    const updated = setConfigValue(text, 'reward_scale', '2.5');
    expect(updated).toContain('# my run');
    expect(updated).toContain('# short');
    expect(parseRunConfigYaml(updated).config!.training.reward_scale).toBe(2.5);
  });

  it('refuses a bad value with the validator message', () => {
    expect(() => setConfigValue('', 'training.optimizer', 'sgd')).toThrow(
      '"training.optimizer" is "sgd"; allowed: adam, adamw.',
    );
    expect(() => resolveConfigKey('learning_rat')).toThrow('Did you mean');
    expect(() => resolveConfigKey('enabled')).toThrow(/ambiguous/);
  });
});

describe('presets', () => {
  it('every preset is a valid config', () => {
    for (const name of Object.keys(PRESETS)) expect(presetConfig(name).name).toBe(name);
    expect(() => presetConfig('nope')).toThrow('Presets: demo');
  });
});
