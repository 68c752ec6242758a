/**
 * `spindle collect`: roll out and judge without training, through
 * the pipeline's collection (src/pipeline/platform/node-collect.ts over collect.ts: its jobs, judging, storage as a
 * run with Atropos scored groups), ready for `spindle export` and `spindle sft`. Here: the options, the model,
 * progress and the summary. `--policy expert` replays each environment's scripted expert instead of the
 * model; `--atropos URL` also streams each scored group to a running Atropos trajectory API server, at
 * its trainer's pace. Ctrl-C stops after the current group, and at once while waiting on the server;
 * what was collected stays. With `--atropos`, the exit code is non-zero unless the server took every group.
 */
import { CliError, type Command, type CommandContext } from '../command.ts';
import { pipeline } from '../pipeline.ts';
import type { RunConfig } from '../../config/schema.ts';
import type { CollectSummary } from '../../pipeline/operations/collect.ts';
import type { NodeStore } from '../../pipeline/platform/node-store.ts';
import { applyCalibrationOption, calibrationOption } from './calibrate.ts';
import { Progress } from './progress.ts';
import { SMALL_SIZES, smallCap, smallConfig } from './small.ts';
import { envFileOption, useUserEnvironments } from './user-envs.ts';
import {
  choiceOption,
  configOrDefault,
  formatScore,
  intOption,
  loadModel,
  modelOption,
  modelPath,
  noPositionals,
  percent,
  storeOption,
  stringOption,
  withStore,
  type Values,
} from './shared.ts';

async function collectInto(
  store: NodeStore,
  ctx: CommandContext,
  values: Values,
  config: RunConfig,
): Promise<CollectSummary> {
  const atroposUrl = stringOption(values, 'atropos');
  let progress: Progress | null = null;
  try {
    return await pipeline().collectInNode({
      store,
      config,
      policy: choiceOption(values, 'policy', ['model', 'expert'] as const, 'model'),
      groups: smallCap(intOption(values, 'groups'), SMALL_SIZES.groups),
      groupSize: smallCap(intOption(values, 'group-size'), SMALL_SIZES.groupSize),
      runName: stringOption(values, 'name'),
      signal: ctx.signal,
      loadModel: (c) => loadModel(ctx, modelPath(ctx, values, c.model.base_model), c),
      atropos: atroposUrl
        ? { url: atroposUrl, onWait: (what) => ctx.err(`collect: Atropos at ${atroposUrl}: ${what}, retrying`) }
        : null,
      onStart: (groups) => {
        progress = new Progress(ctx, 'collect: groups', groups);
      },
      onGroup: (all) => progress?.tick(1, `mean score ${formatScore(mean(all.map((t) => t.judge_score)))}`),
    });
  } finally {
    (progress as Progress | null)?.finish();
  }
}

function mean(xs: (number | null)[]): number | null {
  const scored = xs.filter((x): x is number => x !== null);
  return scored.length ? scored.reduce((a, b) => a + b, 0) / scored.length : null;
}

export const collect: Command = {
  name: 'collect',
  summary: 'Roll out and judge without training; stores the trajectories (and Atropos groups) as a run in the store.',
  options: {
    config: {
      type: 'string',
      description: 'run config (environments, judges, sampling, group_size); default: built-in defaults',
      placeholder: 'file',
    },
    groups: { type: 'string', description: 'tasks to roll out (default: training.batch_size)', placeholder: 'n' },
    'group-size': {
      type: 'string',
      description: 'samples per task (default: training.group_size; 1 with --policy expert)',
      placeholder: 'n',
    },
    policy: {
      type: 'string',
      default: 'model',
      description: "model (the local policy) or expert (each environment's scripted expert)",
      placeholder: 'kind',
    },
    model: modelOption,
    name: { type: 'string', description: 'run name (default: <config name>-collect)', placeholder: 'name' },
    atropos: {
      type: 'string',
      description:
        'also stream each scored group to this Atropos trajectory API server, waiting while its queue is full',
      placeholder: 'url',
    },
    'env-file': envFileOption,
    calibration: calibrationOption,
    store: storeOption,
  },
  async run(values, positionals, ctx) {
    noPositionals(positionals, 'collect');
    const loaded = smallConfig(
      applyCalibrationOption(
        ctx,
        values,
        configOrDefault(ctx, stringOption(values, 'config'), undefined, { userEnvironments: true }),
      ),
    );
    const summary = await withStore(
      ctx,
      values,
      async (store) => {
        const collected = await collectInto(
          store,
          ctx,
          values,
          (await useUserEnvironments(ctx, values, loaded, store)).config,
        );
        return { ...collected, label: (await pipeline().runLabeller(store))(collected.runId) };
      },
      { create: true },
    );
    const ts = summary.trajectories;
    const scored = ts.filter((t) => t.judge_score !== null);
    const successes = ts.filter((t) => t.success === true).length;
    ctx.out(`run ${summary.label}: ${ts.length} trajectories in ${summary.groups} groups (${scored.length} scored)`);
    ctx.out(
      `mean score ${formatScore(mean(ts.map((t) => t.judge_score)))}, success ${ts.length ? percent(successes / ts.length) : '—'}`,
    );
    if (summary.interrupted) ctx.out(`interrupted: kept the ${summary.groups} finished groups`);
    if (summary.atropos) {
      const report = pipeline().describeDelivery(summary.atropos, stringOption(values, 'atropos') ?? '');
      if (!pipeline().deliveredAll(summary.atropos)) throw new CliError(report);
      ctx.out(report);
    }
  },
};
