/** `spindle config set KEY VALUE` (e.g. `reward_scale 2.5`) and `spindle config init`. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { CliError, type Command } from '../command.ts';
import { setConfigValue, stringifyRunConfig, parseRunConfigYaml, formatConfigErrors } from '../../config/yaml.ts';
import { DEFAULT_PRESET, presetConfig, PRESETS } from '../../config/presets.ts';
import { countOf } from '../../pipeline/operations/report-text.ts';

const configOption = {
  type: 'string',
  default: 'spindle.yaml',
  description: 'the run config file',
  placeholder: 'file',
} as const;

export const configSet: Command = {
  name: 'config set',
  summary:
    'Set one field of a run config file, e.g. `spindle config set reward_scale 2.5` (creates the file if missing).',
  args: ['KEY', 'VALUE'],
  options: { config: configOption },
  async run(values, positionals, ctx) {
    if (positionals.length !== 2)
      throw new CliError('config set needs KEY and VALUE, e.g. `spindle config set learning_rate 3e-5`.', 2);
    const file = resolve(ctx.cwd, values.config as string);
    const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
    const updated = setConfigValue(text, positionals[0], positionals[1]);
    writeFileSync(file, updated);
    ctx.out(`${values.config}: ${positionals[0]} = ${positionals[1]}`);
  },
};

export const configInit: Command = {
  name: 'config init',
  summary: `Write a full run config with every default, from the ${DEFAULT_PRESET} preset (what the Train screen opens on) or a named one: ${Object.keys(PRESETS).join(', ')}.`,
  options: {
    config: configOption,
    preset: {
      type: 'string',
      description: `start from a named preset (default ${DEFAULT_PRESET})`,
      placeholder: 'name',
    },
    force: { type: 'boolean', description: 'overwrite an existing file' },
  },
  async run(values, _positionals, ctx) {
    const file = resolve(ctx.cwd, values.config as string);
    if (existsSync(file) && !values.force)
      throw new CliError(`${values.config} already exists; pass --force to overwrite it.`);
    const config = presetConfig((values.preset as string | undefined) ?? DEFAULT_PRESET);
    writeFileSync(file, stringifyRunConfig(config));
    ctx.out(`wrote ${values.config}`);
  },
};

export const configCheck: Command = {
  name: 'config check',
  summary: 'Validate a run config file and print every problem with its line.',
  options: { config: configOption },
  async run(values, _positionals, ctx) {
    const file = resolve(ctx.cwd, values.config as string);
    if (!existsSync(file))
      throw new CliError(`${values.config} does not exist. Create one with \`spindle config init\`.`);
    const { errors } = parseRunConfigYaml(readFileSync(file, 'utf8'));
    if (errors.length)
      throw new CliError(
        `${countOf(errors.length, 'problem')}:\n${formatConfigErrors(errors, values.config as string)}`,
      );
    ctx.out(`${values.config}: ok`);
  },
};
