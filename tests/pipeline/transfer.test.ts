/** The transfer operation's config half (spindle transfer init, transfer train): what it writes and refuses. */
import { describe, expect, it } from 'vitest';
import { presetConfig } from '../../src/config/presets.ts';
import { parseRunConfigYaml } from '../../src/config/yaml.ts';
import { transferConfig, transferLearningRate } from '../../src/pipeline/operations/transfer.ts';

const base = presetConfig('transfer');
const plan = {
  sourceEnv: 'shell_exec',
  targetEnv: 'git_repo',
  freezeLayers: '0 - 2',
  source: null,
  learningRateScale: 0.25,
  maxSteps: 7,
};

describe('transfer', () => {
  it('writes a config for the target, frozen layers, scale and the source found for the source environment', async () => {
    const asked: string[] = [];
    const { config, yaml } = await transferConfig(base, plan, 't.yaml', async (env) => (asked.push(env), 'run-7'));
    expect(asked).toEqual(['shell_exec']);
    expect(config).toMatchObject({
      name: 'transfer-shell_exec-to-git_repo',
      tasks: { environments: ['git_repo'] },
      lora: { freeze_layers: '0-2' },
      transfer: { learning_rate_scale: 0.25, source_checkpoint: 'run-7' },
      training: { max_steps: 7 },
    });
    expect(yaml).toMatch(/^# transfer shell_exec → git_repo: .*spindle transfer train --config t\.yaml/);
    expect(parseRunConfigYaml(yaml).config).toEqual(config);
    // A source given in the plan is kept; nothing is looked up.
    expect(
      (
        await transferConfig(base, { ...plan, source: 'a.zip' }, 't.yaml', () => {
          throw new Error('not asked');
        })
      ).config.transfer.source_checkpoint,
    ).toBe('a.zip');
  });

  it('refuses an unknown environment or a layer list that is not a range, naming which', async () => {
    await expect(transferConfig(base, { ...plan, targetEnv: 'nope' }, 't.yaml')).rejects.toThrow(
      /^target environment: /,
    );
    await expect(transferConfig(base, { ...plan, freezeLayers: 'low' }, 't.yaml')).rejects.toThrow(
      /"low" is not a layer range/,
    );
  });

  it('trains with the learning rate scaled once, leaving the config as written', () => {
    const c = {
      ...base,
      training: { ...base.training, learning_rate: 1e-3 },
      transfer: { ...base.transfer, learning_rate_scale: 0.5 },
    };
    expect(transferLearningRate(c)).toBeCloseTo(5e-4, 15);
    expect([c.training.learning_rate, c.transfer.learning_rate_scale]).toEqual([1e-3, 0.5]);
  });
});
