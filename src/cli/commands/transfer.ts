/**
 * `spindle transfer init` (the seed's rl_transfer_init --source_env --target_env --freeze_layers):
 * writes a run config that trains the target environment from a source checkpoint with the lower
 * layers frozen and a scaled-down learning rate. `spindle transfer train --config FILE` runs it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CliError, type Command } from '../command.ts';
import { presetConfig } from '../../config/presets.ts';
import { parseRunConfigYaml, stringifyRunConfig } from '../../config/yaml.ts';
import { getEnvironment } from '../../envs/registry.ts';
import { listRuns, loadLatestCheckpoint } from '../../store/index.ts';
import { SNAPSHOT_FILE } from '../../store/file-store.ts';
import {
  configOrDefault, intOption, noPositionals, numberOption, requireOption, storeDir, storeOption, stringOption, withStore, writeOutput, type Values,
} from './shared.ts';
import type { CommandContext } from '../command.ts';

function checkEnv(name: string, flag: string): string {
  try {
    return getEnvironment(name).name;
  } catch (e) {
    throw new CliError(`--${flag}: ${(e as Error).message}`);
  }
}

/** --source, or the newest run in the store that trained on the source environment and has a checkpoint. */
async function findSource(ctx: CommandContext, values: Values, sourceEnv: string): Promise<string | null> {
  const given = stringOption(values, 'source');
  if (given) return given;
  if (!existsSync(join(storeDir(ctx, values), SNAPSHOT_FILE))) return null;
  return withStore(ctx, values, async (store) => {
    for (const run of await listRuns(store)) {
      if (run.config.tasks.environments.includes(sourceEnv) && (await loadLatestCheckpoint(store, run.id))) return run.id;
    }
    return null;
  });
}

export const transferInit: Command = {
  name: 'transfer init',
  summary: 'Write a transfer run config: target environment, frozen layers, source checkpoint, scaled learning rate.',
  options: {
    'source-env': { type: 'string', description: 'the environment the source run trained on', placeholder: 'env' },
    'target-env': { type: 'string', description: 'the environment to train now', placeholder: 'env' },
    'freeze-layers': { type: 'string', description: 'inclusive layer range kept frozen, e.g. 0-8 or 0-3,6', placeholder: 'range' },
    source: { type: 'string', description: 'source run id (in --store) or adapter zip; default: the newest run on --source-env with a checkpoint', placeholder: 'run|zip' },
    'lr-scale': { type: 'string', description: 'learning-rate multiplier for the transfer (default: transfer.learning_rate_scale)', placeholder: 'x' },
    steps: { type: 'string', description: 'training.max_steps of the new config', placeholder: 'n' },
    config: { type: 'string', description: 'base config to start from (default: the transfer preset)', placeholder: 'file' },
    output: { type: 'string', description: 'the config file to write', placeholder: 'file.yaml' },
    store: storeOption,
  },
  async run(values, positionals, ctx) {
    noPositionals(positionals, 'transfer init');
    const sourceEnv = checkEnv(requireOption(values, 'source-env', '--source-env shell_exec'), 'source-env');
    const targetEnv = checkEnv(requireOption(values, 'target-env', '--target-env git_repo'), 'target-env');
    const freeze = requireOption(values, 'freeze-layers', '--freeze-layers 0-1');
    if (!/^\s*\d+\s*(-\s*\d+\s*)?(,\s*\d+\s*(-\s*\d+\s*)?)*$/.test(freeze)) throw new CliError(`--freeze-layers "${freeze}" is not a layer range; write it like 0-8 or 0-3,6.`, 2);
    const output = requireOption(values, 'output', '--output transfer.yaml');
    const config = configOrDefault(ctx, stringOption(values, 'config'), presetConfig('transfer'));
    config.name = `transfer-${sourceEnv}-to-${targetEnv}`;
    config.tasks.environments = [targetEnv];
    config.lora.freeze_layers = freeze.replace(/\s+/g, '');
    config.transfer.learning_rate_scale = numberOption(values, 'lr-scale') ?? config.transfer.learning_rate_scale;
    config.training.max_steps = intOption(values, 'steps') ?? config.training.max_steps;
    const source = await findSource(ctx, values, sourceEnv);
    config.transfer.source_checkpoint = source;
    const text = `# transfer ${sourceEnv} → ${targetEnv}: written by \`spindle transfer init\`; run with \`spindle transfer train --config ${output}\`\n${stringifyRunConfig(config)}`;
    const { errors } = parseRunConfigYaml(text);
    if (errors.length) throw new CliError(`the transfer config is invalid: ${errors[0].message}`);
    const file = writeOutput(ctx, output, text);
    const lr = config.training.learning_rate;
    ctx.out(`wrote ${file}`);
    ctx.out(`  target ${targetEnv}, frozen layers ${config.lora.freeze_layers}, learning rate ${lr} × ${config.transfer.learning_rate_scale} = ${+(lr * config.transfer.learning_rate_scale).toPrecision(4)}`);
    if (source) ctx.out(`  source ${source}`);
    else ctx.err(`warning: no source checkpoint yet (no run on ${sourceEnv} in ${storeDir(ctx, values)}); train one, then set it with \`spindle config set --config ${output} transfer.source_checkpoint RUN_ID\``);
  },
};
