/**
 * `spindle sft`: supervised fine-tuning (pipeline/operations/sft.ts) on exported trajectories (Parquet), HF chat
 * JSONL or instruction JSONL. Reads the data and the model, calls the operation, and writes the PEFT
 * adapter zip and/or the merged model to --output. Ctrl-C stops after the current update and still
 * writes what was trained.
 */
import { readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { CliError, type Command, type CommandContext } from '../command.ts';
import { pipeline } from '../pipeline.ts';
import { presetConfig } from '../../config/presets.ts';
import type { SftFile } from '../../pipeline/operations/sft.ts';
import { Progress } from './progress.ts';
import { smallConfig } from './small.ts';
import {
  configOrDefault,
  inputPath,
  intOption,
  loadModel,
  modelOption,
  modelPath,
  noPositionals,
  numberOption,
  outputDir,
  readBytes,
  requireOption,
  stringOption,
  writeOutput,
} from './shared.ts';

/** The data files named by --data: the file itself, or every .parquet / .jsonl file in the folder. */
function dataFiles(ctx: CommandContext, path: string): SftFile[] {
  const full = inputPath(ctx, path, 'training data');
  const files = statSync(full).isDirectory()
    ? readdirSync(full)
        .filter((f) => /\.(parquet|jsonl)$/.test(f))
        .sort()
        .map((f) => join(full, f))
    : [full];
  if (!files.length) throw new CliError(`${path} holds no .parquet or .jsonl files.`);
  return files.map((f) => ({ name: basename(f), bytes: readBytes(ctx, f, 'training data file') }));
}

export const sft: Command = {
  name: 'sft',
  summary:
    'Supervised fine-tuning on Parquet / HF chat JSONL / instruction JSONL; writes a PEFT adapter zip and/or the merged model.',
  options: {
    data: { type: 'string', description: 'a .parquet or .jsonl file, or a folder of them', placeholder: 'dir|file' },
    epochs: { type: 'string', description: 'passes over the data (default: training.epochs, 3)', placeholder: 'n' },
    'learning-rate': { type: 'string', description: 'override training.learning_rate', placeholder: 'lr' },
    'min-score': {
      type: 'string',
      description: 'train on rows scoring at least this (default: the successful ones; 0: every row)',
      placeholder: 'x',
    },
    model: modelOption,
    output: {
      type: 'string',
      default: 'sft-out',
      description: 'folder for adapter.zip (and the merged model with --merge)',
      placeholder: 'dir',
    },
    merge: {
      type: 'boolean',
      description: 'also write the merged model (config.json + model.safetensors) to --output',
    },
    config: {
      type: 'string',
      description: 'run config (lora, training.batch_size, …); default: the sft preset',
      placeholder: 'file',
    },
  },
  async run(values, positionals, ctx) {
    noPositionals(positionals, 'sft');
    const given = configOrDefault(ctx, stringOption(values, 'config'), presetConfig('sft'));
    given.training.method = 'sft';
    given.training.epochs = intOption(values, 'epochs') ?? given.training.epochs;
    given.training.learning_rate = numberOption(values, 'learning-rate') ?? given.training.learning_rate;
    const config = smallConfig(given);
    const out = outputDir(ctx, stringOption(values, 'output') ?? 'sft-out');
    const data = requireOption(values, 'data', '--data export/trajectories.parquet');
    const files = dataFiles(ctx, data);
    const minScore = numberOption(values, 'min-score');
    const loaded = await loadModel(ctx, modelPath(ctx, values, config.model.base_model), config);
    const { model, tokenizer } = loaded;
    try {
      const read = await Promise.all(files.map((f) => pipeline().sftExamples(f, tokenizer, { minScore })));
      const { kept: examples, truncated } = pipeline().fitToContext(
        read.flatMap((r) => r.examples),
        model.config.maxPositions,
      );
      const leftOut = read.reduce((n, r) => n + r.leftOut, 0);
      const unselected =
        minScore !== undefined ? `scoring below ${minScore}` : 'that did not succeed (--min-score 0 keeps every row)';
      if (!examples.length) {
        throw new CliError(
          `No training examples in ${data}${leftOut ? ` (left out: ${leftOut} rows ${unselected})` : ''}.`,
        );
      }
      if (leftOut) ctx.out(`sft: left out ${leftOut} rows ${unselected}`);
      ctx.out(
        `sft: ${examples.length} examples from ${files.length} file(s)${truncated ? ` (${truncated} cut to ${model.config.maxPositions} tokens)` : ''}, ${config.training.epochs} epochs, ${config.lora.r > 0 ? `LoRA r=${config.lora.r}` : 'full fine-tuning'}`,
      );
      const perUpdate = config.training.batch_size * config.training.grad_accum_steps;
      const progress = new Progress(
        ctx,
        'sft: updates',
        config.training.epochs * Math.ceil(examples.length / perUpdate),
      );
      const result = await pipeline().runSft({
        model,
        tokenizer,
        hfConfig: loaded.hfConfig,
        config,
        examples,
        merge: Boolean(values.merge),
        signal: ctx.signal,
        baseModel: stringOption(values, 'model') ?? config.model.base_model,
        onUpdate: (loss) => progress.tick(1, `loss ${loss.toFixed(4)}`),
      });
      progress.finish();
      const { losses } = result;
      if (!losses.length) throw new CliError('sft: interrupted before the first update; nothing written.', 130);
      ctx.out(
        `sft: ${losses.length} updates, loss ${losses[0].toFixed(4)} → ${losses[losses.length - 1].toFixed(4)} (first → last update)`,
      );
      if (result.adapter) ctx.out(`wrote ${writeOutput(ctx, join(out, 'adapter.zip'), result.adapter)}`);
      if (result.model) {
        for (const [name, bytes] of result.model) writeOutput(ctx, join(out, name), bytes);
        ctx.out(`wrote the ${result.adapter ? 'merged ' : ''}model (${[...result.model.keys()].join(', ')}) to ${out}`);
      }
      if (ctx.signal.aborted) ctx.out(`interrupted after ${losses.length} updates; saved what was trained`);
    } finally {
      model.dispose();
    }
  },
};
