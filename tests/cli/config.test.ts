import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PRESET, presetConfig } from '../../src/config/presets.ts';
import { parseRunConfigYaml } from '../../src/config/yaml.ts';
import { cli, tempDir } from './helpers.ts';

describe('spindle config', () => {
  it('init writes a valid full config, set edits it, check validates it', async () => {
    const dir = tempDir();
    expect((await cli(dir, 'config', 'init', '--preset', 'demo')).code).toBe(0);
    expect((await cli(dir, 'config', 'set', 'reward_scale', '2.5')).code).toBe(0);
    const config = parseRunConfigYaml(readFileSync(join(dir, 'spindle.yaml'), 'utf8')).config!;
    expect(config.training.reward_scale).toBe(2.5);
    expect(config.name).toBe('demo');
    expect(await cli(dir, 'config', 'check')).toMatchObject({ code: 0, out: 'spindle.yaml: ok' });
  });

  it('init with no preset writes the default preset, the config the Train screen opens on', async () => {
    const dir = tempDir();
    expect((await cli(dir, 'config', 'init')).code).toBe(0);
    const config = parseRunConfigYaml(readFileSync(join(dir, 'spindle.yaml'), 'utf8')).config!;
    expect(config).toEqual(presetConfig(DEFAULT_PRESET));
    expect(config.tasks.environments).toEqual(['func_trace']);
  });

  it('a bad value, a bad flag, an unknown command: one line, non-zero exit, no stack trace', async () => {
    const dir = tempDir();
    const bad = await cli(dir, 'config', 'set', 'optimizer', 'sgd');
    expect(bad).toMatchObject({ code: 1, err: 'spindle: "training.optimizer" is "sgd"; allowed: adam, adamw.' });
    const flag = await cli(dir, 'config', 'set', '--nope');
    expect(flag.code).toBe(2);
    expect(flag.err).toMatch(/^spindle: Unknown option '--nope'.*see `spindle config set --help`/);
    expect(flag.err).not.toContain('\n    at ');
    expect((await cli(dir, 'frobnicate')).err).toMatch(/^spindle: Unknown command "frobnicate"/);
    expect((await cli(dir, 'config')).err).toMatch(/needs a subcommand: config init, config set, config check/);
    expect((await cli(dir, 'config', 'check')).err).toMatch(/does not exist/);
  });

  it('check refuses a group size a run could not allocate, naming the line and the range', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'spindle.yaml'), 'training:\n  group_size: 99999999999999999999999\n');
    expect(await cli(dir, 'config', 'check')).toMatchObject({
      code: 1,
      err: 'spindle: 1 problem:\nspindle.yaml:2: "training.group_size" is 1e+23; allowed: a whole number ≥ 2 and ≤ 256.',
    });
  });

  it('--verbose adds the stack trace', async () => {
    const result = await cli(tempDir(), 'config', 'set', 'optimizer', 'sgd', '--verbose');
    expect(result.err.split('\n').length).toBeGreaterThan(1);
  });

  it('prints help for every command', async () => {
    const help = await cli(tempDir(), 'config', 'set', '--help');
    expect(help.out).toContain('Usage: spindle config set KEY VALUE [options]');
    expect(help.out).toContain('--config <file>');
  });
});
