/**
 * `spindle transfer init` (source environment, target environment, frozen layers):
 * writes the run config of pipeline/operations/transfer.ts, which trains the target environment from a source
 * checkpoint with the lower layers frozen and a scaled-down learning rate. `spindle transfer train
 * --config FILE` runs it.
 */
import { CliError, type Command, type CommandContext } from '../command.ts';
import { pipeline } from '../pipeline.ts';
import { presetConfig } from '../../config/presets.ts';
import {
  configOrDefault,
  hasStore,
  intOption,
  noPositionals,
  numberOption,
  requireOption,
  storeDir,
  storeOption,
  stringOption,
  withStore,
  writeOutput,
  type Values,
} from './shared.ts';

/** The newest run in the store that trained on the source environment and has a checkpoint, if the store exists. */
function newestInStore(ctx: CommandContext, values: Values): (sourceEnv: string) => Promise<string | null> {
  return async (sourceEnv) =>
    hasStore(ctx, values)
      ? withStore(ctx, values, (store) => pipeline().newestRunOn(store, sourceEnv), { readOnly: true })
      : null;
}

export const transferInit: Command = {
  name: 'transfer init',
  summary: 'Write a transfer run config: target environment, frozen layers, source checkpoint, scaled learning rate.',
  options: {
    'source-env': { type: 'string', description: 'the environment the source run trained on', placeholder: 'env' },
    'target-env': { type: 'string', description: 'the environment to train now', placeholder: 'env' },
    'freeze-layers': {
      type: 'string',
      description: 'inclusive layer range kept frozen, e.g. 0-8 or 0-3,6',
      placeholder: 'range',
    },
    source: {
      type: 'string',
      description:
        'source run id (in --store) or adapter zip; default: the newest run on --source-env with a checkpoint',
      placeholder: 'run|zip',
    },
    'lr-scale': {
      type: 'string',
      description: 'learning-rate multiplier for the transfer (default: transfer.learning_rate_scale)',
      placeholder: 'x',
    },
    steps: { type: 'string', description: 'training.max_steps of the new config', placeholder: 'n' },
    config: {
      type: 'string',
      description: 'base config to start from (default: the transfer preset)',
      placeholder: 'file',
    },
    output: {
      type: 'string',
      default: 'transfer.yaml',
      description: 'the config file to write (transfer train --config runs it)',
      placeholder: 'file.yaml',
    },
    store: storeOption,
  },
  async run(values, positionals, ctx) {
    noPositionals(positionals, 'transfer init');
    const sourceEnv = requireOption(values, 'source-env', '--source-env shell_exec');
    const targetEnv = requireOption(values, 'target-env', '--target-env git_repo');
    const freezeLayers = requireOption(values, 'freeze-layers', '--freeze-layers 0-1');
    const output = stringOption(values, 'output') ?? 'transfer.yaml';
    const base = configOrDefault(ctx, stringOption(values, 'config'), presetConfig('transfer'));
    const plan = {
      sourceEnv,
      targetEnv,
      freezeLayers,
      source: stringOption(values, 'source') ?? null,
      learningRateScale: numberOption(values, 'lr-scale'),
      maxSteps: intOption(values, 'steps'),
    };
    const { config, yaml } = await pipeline()
      .transferConfig(base, plan, output, newestInStore(ctx, values))
      .catch((e: unknown) => {
        throw new CliError((e as Error).message);
      });
    const file = writeOutput(ctx, output, yaml);
    const lr = config.training.learning_rate;
    const source = config.transfer.source_checkpoint;
    ctx.out(`wrote ${file}`);
    ctx.out(
      `  target ${targetEnv}, frozen layers ${config.lora.freeze_layers}, learning rate ${lr} × ${config.transfer.learning_rate_scale} = ${+(lr * config.transfer.learning_rate_scale).toPrecision(4)}`,
    );
    if (source) ctx.out(`  source ${source}`);
    else
      ctx.err(
        `warning: no source checkpoint yet (no run on ${sourceEnv} in ${storeDir(ctx, values)}); train one, then set it with \`spindle config set --config ${output} transfer.source_checkpoint RUN_ID\``,
      );
  },
};
