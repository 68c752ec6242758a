/**
 * `spindle export trajectories` and `spindle export adapter`
 * (the latest checkpoint's LoRA weights as a PEFT adapter zip, and with --merge the merged model): the
 * same exports as the Models screen (pipeline/operations/dataset-export.ts, adapter-export.ts, merged-export.ts).
 */
import { join } from 'node:path';
import { CliError, type Command, type CommandContext } from '../command.ts';
import { pipeline } from '../pipeline.ts';
import type { CheckpointAdapter } from '../../pipeline/operations/adapter-export.ts';
import {
  choiceOption,
  loadModel,
  modelOption,
  modelPath,
  noPositionals,
  numberOption,
  outputDir,
  requireOption,
  storeOption,
  stringOption,
  withStore,
  writeOutput,
} from './shared.ts';

const FORMATS = ['parquet', 'jsonl', 'atropos'] as const;
const FILE_NAMES = {
  parquet: 'trajectories.parquet',
  jsonl: 'trajectories.jsonl',
  atropos: 'scored_groups.jsonl',
} as const;

export const exportTrajectories: Command = {
  name: 'export trajectories',
  summary: 'Write stored trajectories as Parquet, HF chat JSONL, or Atropos scored-group JSONL.',
  options: {
    format: { type: 'string', description: `one of ${FORMATS.join(', ')}`, placeholder: 'format' },
    output: {
      type: 'string',
      description: `folder to write ${Object.values(FILE_NAMES).join(' / ')} into`,
      placeholder: 'dir',
    },
    store: storeOption,
    run: { type: 'string', description: 'only this run (default: every run)', placeholder: 'id' },
    'min-score': {
      type: 'string',
      description: 'only trajectories scoring at least this (parquet, jsonl)',
      placeholder: 'x',
    },
    env: { type: 'string', description: 'only this environment (parquet, jsonl)', placeholder: 'name' },
    split: {
      type: 'string',
      default: 'train',
      placeholder: 'split',
      description:
        'train, test, validation or all (parquet, jsonl): train by default, so training data never holds a held-out item',
    },
  },
  async run(values, positionals, ctx) {
    noPositionals(positionals, 'export trajectories');
    const format = choiceOption(values, 'format', FORMATS);
    const output = outputDir(ctx, requireOption(values, 'output', '--output out/'));
    const runId = stringOption(values, 'run');
    const split = choiceOption(values, 'split', ['train', 'test', 'validation', 'all'] as const, 'train');
    const query = { runId, minScore: numberOption(values, 'min-score'), env: stringOption(values, 'env'), split };
    const file = join(output, FILE_NAMES[format]);
    await withStore(
      ctx,
      values,
      async (store) => {
        const run = runId ? await pipeline().findRun(store, runId) : null;
        // The Models screen's dataset export, the same function (pipeline/operations/dataset-export.ts).
        const { data, count } = await pipeline().exportDataset(store, format, query);
        if (count === 0) {
          throw new CliError(
            format === 'atropos'
              ? 'No scored groups to export (collect or train first; groups need judged, tokenized trajectories).'
              : 'No trajectories match (check --run, --min-score, --env, --split).',
          );
        }
        writeOutput(ctx, file, data);
        ctx.out(
          `wrote ${count} ${format === 'atropos' ? 'scored groups' : 'trajectories'}${run ? ` of run ${pipeline().runLabel(run)}` : ''} to ${file}`,
        );
      },
      { readOnly: true },
    );
  },
};

/**
 * The merged model (pipeline/operations/merged-export.ts) written into `dir`; the base is --model or the one the adapter
 * was trained on (`name`: as the run or --model names it; `baseModel`: where it is loaded from).
 */
async function writeMerged(
  ctx: CommandContext,
  dir: string,
  name: string,
  baseModel: string,
  adapter: CheckpointAdapter,
): Promise<void> {
  const base = await loadModel(ctx, baseModel);
  try {
    const files = await pipeline().mergedModel({ ...base, baseModel: name }, adapter.tensors, adapter.config);
    for (const [name, bytes] of files) writeOutput(ctx, join(dir, name), bytes);
    ctx.out(`wrote the merged model (${[...files.keys()].join(', ')}) to ${dir}`);
  } catch (e) {
    throw e instanceof CliError ? e : new CliError(`merge into ${baseModel}: ${(e as Error).message}`);
  } finally {
    base.model.dispose();
  }
}

export const exportAdapter: Command = {
  name: 'export adapter',
  summary:
    "Write the LoRA adapter of a run's latest checkpoint as a PEFT adapter zip (adapter_config.json, adapter_model.safetensors, README.md), and with --merge the base with the adapter folded in.",
  options: {
    run: { type: 'string', description: 'the run (default: the newest run with a checkpoint)', placeholder: 'id' },
    output: { type: 'string', description: 'the zip to write', placeholder: 'file.zip' },
    merge: {
      type: 'string',
      description: 'also write the merged model (config.json, model.safetensors, tokenizer files) into this folder',
      placeholder: 'dir',
    },
    model: {
      ...modelOption,
      description: 'the base to merge into (default: the model the run trained, its model.base_model)',
    },
    store: storeOption,
  },
  async run(values, positionals, ctx) {
    noPositionals(positionals, 'export adapter');
    const output = requireOption(values, 'output', '--output adapter.zip');
    await withStore(
      ctx,
      values,
      async (store) => {
        const run = await pipeline().findRun(store, stringOption(values, 'run'), true);
        const adapter = await pipeline().latestAdapterZip(store, run.id);
        const file = writeOutput(ctx, output, adapter.zip);
        ctx.out(
          `wrote the adapter of run ${pipeline().runLabel(run)} at step ${adapter.step} (${adapter.tensors.size} tensors, r=${adapter.config.r}) to ${file}`,
        );
        const mergeDir = stringOption(values, 'merge');
        if (mergeDir) {
          const name = stringOption(values, 'model') ?? pipeline().adapterBaseModel(adapter);
          await writeMerged(
            ctx,
            outputDir(ctx, mergeDir),
            name,
            modelPath(ctx, values, pipeline().adapterBaseModel(adapter)),
            adapter,
          );
        }
      },
      { readOnly: true },
    );
  },
};
