/**
 * `spindle bootstrap`: a policy that scores 0 on an environment gives GRPO nothing to learn from, so this
 * runs the flow that starts it (pipeline/operations/bootstrap.ts): held-out success, demonstrations (the
 * environment's expert, your stored episodes, or a model at an OpenAI-compatible endpoint), SFT on the
 * successful ones, held-out success again, then GRPO from the fine-tuned weights. Prints each figure with
 * its interval and writes the SFT adapter and a JSON report to --output. Ctrl-C stops after the current
 * step and reports what was done.
 */
import { join } from 'node:path';
import { CliError, type Command, type CommandContext } from '../command.ts';
import { pipeline } from '../pipeline.ts';
import type { RunConfig } from '../../config/schema.ts';
import type { BootstrapEvent, BootstrapReport } from '../../pipeline/operations/bootstrap.ts';
import { BOOTSTRAP_DEFAULTS } from '../../pipeline/operations/defaults.ts';
import type { DemonstrationSource } from '../../pipeline/operations/demonstrations.ts';
import { Progress } from './progress.ts';
import { smallCap, smallConfig } from './small.ts';
import { envFileOption, useUserEnvironments } from './user-envs.ts';
import {
  choiceOption,
  configOrDefault,
  intOption,
  loadModel,
  modelOption,
  modelPath,
  noPositionals,
  numberOption,
  outputDir,
  percent,
  storeOption,
  stringOption,
  withStore,
  writeOutput,
  type Values,
} from './shared.ts';

/** Where the demonstrations come from, from the flags; a remote source needs its address and model. */
function demonstrationSource(values: Values): DemonstrationSource {
  const from = choiceOption(values, 'from', ['expert', 'episodes', 'remote'] as const, 'expert');
  if (from === 'expert') return { kind: 'expert' };
  if (from === 'episodes') return { kind: 'episodes', runId: stringOption(values, 'episodes-run') ?? null };
  const baseUrl = stringOption(values, 'endpoint');
  const model = stringOption(values, 'remote-model');
  if (!baseUrl || !model)
    throw new CliError(
      '--from remote needs --endpoint URL (e.g. http://127.0.0.1:8000/v1) and --remote-model NAME (the model the endpoint serves).',
      2,
    );
  const keyEnv = stringOption(values, 'api-key-env');
  const apiKey = keyEnv ? process.env[keyEnv] : undefined;
  if (keyEnv && !apiKey)
    throw new CliError(
      `--api-key-env ${keyEnv}: that environment variable is not set; export it, or drop the flag for a server without keys.`,
      2,
    );
  const timeoutMs = (intOption(values, 'remote-timeout') ?? 60) * 1000;
  return { kind: 'remote', baseUrl, model, apiKey, timeoutMs };
}

function eventPrinter(ctx: CommandContext): { onEvent: (e: BootstrapEvent) => void; finish(): void } {
  let progress: Progress | null = null;
  const finish = () => {
    progress?.finish();
    progress = null;
  };
  return {
    finish,
    onEvent(e) {
      if (e.type === 'stage') {
        finish();
        ctx.err(`bootstrap: ${e.line}`);
      } else if (e.type === 'held-out') ctx.out(`held-out ${e.stage}: ${pipeline().formatHeldOut(e.result)}`);
      else if (e.type === 'demonstration')
        (progress ??= new Progress(ctx, 'bootstrap: demonstrations', e.total)).update(e.done, `${e.good} succeeded`);
      else if (e.type === 'sft-update')
        (progress ??= new Progress(ctx, 'bootstrap: SFT updates', e.total)).update(e.done, `loss ${e.loss.toFixed(4)}`);
      else if (e.type === 'run') {
        const r = e.event;
        if (r.type === 'progress')
          (progress ??= new Progress(ctx, 'bootstrap: GRPO updates', r.total, 10)).update(r.done, '', r.total);
        else if (r.type === 'evaluation' && r.split === 'test')
          ctx.err(`eval step ${r.step} ${r.env} (${r.n} items): success ${percent(r.success)}`);
        else if (r.type === 'error' && !r.fatal) ctx.err(`warning: ${r.message}`);
      }
    },
  };
}

/** `label` names a run id with its run's name beside it (`runLabeller`). */
function summary(ctx: CommandContext, report: BootstrapReport, label: (id: string) => string): void {
  const d = report.demonstrations;
  ctx.out(
    `${report.env} level ${report.level}: demonstrations from ${d.source}: ${d.good} of ${d.total} succeeded${d.runId ? ` (stored as run ${label(d.runId)})` : ''}`,
  );
  const steps = [`before ${pipeline().formatHeldOut(report.baseline)}`];
  if (report.afterSft) steps.push(`after SFT ${pipeline().formatHeldOut(report.afterSft)}`);
  if (report.grpo?.heldOut)
    steps.push(
      `after GRPO (run ${label(report.grpo.runId)}, ${report.grpo.steps} updates) ${pipeline().formatHeldOut(report.grpo.heldOut)}`,
    );
  ctx.out(`held-out success: ${steps.join(' → ')}`);
  if (report.stopped) ctx.out('interrupted: the figures above are what was done');
}

export const bootstrap: Command = {
  name: 'bootstrap',
  summary:
    'Start a policy that scores 0 on an environment: demonstrations, SFT on the good ones, then GRPO; held-out success before and after each.',
  options: {
    env: {
      type: 'string',
      description: 'the environment: a built-in or one kept with `spindle envs add`',
      placeholder: 'name',
    },
    'env-file': envFileOption,
    from: {
      type: 'string',
      default: 'expert',
      description:
        "demonstrations from: expert (the environment's expert), episodes (your stored ones), remote (an OpenAI-compatible endpoint)",
      placeholder: 'source',
    },
    'episodes-run': {
      type: 'string',
      description:
        "with --from episodes: only this run's episodes (default: every stored train-split episode of the environment)",
      placeholder: 'run-id',
    },
    endpoint: {
      type: 'string',
      description: 'with --from remote: the endpoint root with its version, e.g. http://127.0.0.1:8000/v1',
      placeholder: 'url',
    },
    'remote-model': {
      type: 'string',
      description: 'with --from remote: the model name the endpoint serves',
      placeholder: 'name',
    },
    'api-key-env': {
      type: 'string',
      description: 'with --from remote: the environment variable holding its API key (sent as a Bearer token)',
      placeholder: 'VAR',
    },
    'remote-timeout': {
      type: 'string',
      description: 'with --from remote: seconds to wait for each reply (default 60)',
      placeholder: 's',
    },
    demos: {
      type: 'string',
      description: `demonstration tasks to collect (default ${BOOTSTRAP_DEFAULTS.demonstrations})`,
      placeholder: 'n',
    },
    'sft-epochs': {
      type: 'string',
      description: `SFT passes over the good demonstrations (default ${BOOTSTRAP_DEFAULTS.sftEpochs})`,
      placeholder: 'n',
    },
    'sft-learning-rate': {
      type: 'string',
      description: `SFT learning rate (default ${BOOTSTRAP_DEFAULTS.sftLearningRate})`,
      placeholder: 'lr',
    },
    steps: {
      type: 'string',
      description: 'GRPO updates after SFT (default: training.max_steps; 0 stops after SFT)',
      placeholder: 'n',
    },
    items: {
      type: 'string',
      description: 'distinct held-out items of each figure (default: tasks.eval_items)',
      placeholder: 'n',
    },
    config: {
      type: 'string',
      description: 'run config for the GRPO run (group size, learning rate, seed, …); default: built-in defaults',
      placeholder: 'file',
    },
    model: modelOption,
    output: {
      type: 'string',
      default: 'bootstrap-out',
      description: 'folder for the SFT adapter (sft-adapter.zip) and report.json',
      placeholder: 'dir',
    },
    store: storeOption,
  },
  async run(values, positionals, ctx) {
    noPositionals(positionals, 'bootstrap');
    const given = configOrDefault(ctx, stringOption(values, 'config'), undefined, { userEnvironments: true });
    const envName = stringOption(values, 'env');
    if (!envName && !values['env-file'])
      throw new CliError(
        '--env NAME or --env-file FILE is required: the one environment to bootstrap, e.g. --env-file examples/envs/tide-table.js.',
        2,
      );
    const asked: RunConfig = {
      ...given,
      name: given.name === 'run' ? 'bootstrap' : given.name,
      tasks: { ...given.tasks, environments: envName ? [envName] : [], task_file: null, env_files: [] },
    };
    if (stringOption(values, 'model'))
      asked.model = { ...asked.model, base_model: modelPath(ctx, values, asked.model.base_model) };
    asked.training = { ...asked.training, max_steps: intOption(values, 'steps', 0) ?? asked.training.max_steps };
    asked.tasks.eval_items = intOption(values, 'items') ?? asked.tasks.eval_items;
    const settings = {
      source: demonstrationSource(values),
      demonstrations: smallCap(intOption(values, 'demos') ?? BOOTSTRAP_DEFAULTS.demonstrations, 16),
      sftEpochs: smallCap(intOption(values, 'sft-epochs') ?? BOOTSTRAP_DEFAULTS.sftEpochs, 1),
      sftLearningRate: numberOption(values, 'sft-learning-rate') ?? BOOTSTRAP_DEFAULTS.sftLearningRate,
      sftBatchSize: BOOTSTRAP_DEFAULTS.sftBatchSize,
    };
    const out = outputDir(ctx, stringOption(values, 'output') ?? 'bootstrap-out');
    const printer = eventPrinter(ctx);
    const { report, label } = await withStore(
      ctx,
      values,
      async (store) => {
        const { config, sources } = await useUserEnvironments(ctx, values, asked, store);
        try {
          const report = await pipeline().bootstrapInNode({
            store,
            config: smallConfig(config),
            environments: sources,
            settings,
            signal: ctx.signal,
            onEvent: printer.onEvent,
            loadModel: (c) => loadModel(ctx, modelPath(ctx, values, c.model.base_model), c),
          });
          return { report, label: await pipeline().runLabeller(store) };
        } finally {
          printer.finish();
        }
      },
      { create: true },
    );
    summary(ctx, report, label);
    if (report.sft.adapter) ctx.out(`wrote ${writeOutput(ctx, join(out, 'sft-adapter.zip'), report.sft.adapter)}`);
    const { adapter: _adapter, ...sft } = report.sft;
    ctx.out(`wrote ${writeOutput(ctx, join(out, 'report.json'), JSON.stringify({ ...report, sft }, null, 2) + '\n')}`);
  },
};
