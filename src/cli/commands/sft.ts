/**
 * `spindle sft`: supervised fine-tuning (the seed's rl_finetune_supervised / llm_finetune --method=sft)
 * on exported trajectories (Parquet), HF chat JSONL or instruction JSONL. Trains LoRA (or every
 * weight when lora.r is 0) with Trainer.sftTrain and writes the PEFT adapter zip and/or the merged
 * model to --output. Ctrl-C stops after the current update and still writes what was trained.
 */
import { readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { CliError, type Command, type CommandContext } from '../command.ts';
import { presetConfig } from '../../config/presets.ts';
import { parquetToTrajectories } from '../../export/parquet.ts';
import { adapterZip, type PeftConfig } from '../../export/peft.ts';
import { exportLora, mergeLora, peftAdapterConfig } from '../../model/lora.ts';
import { saveModelToDir } from '../../model/hf.ts';
import type { TextTokenizer } from '../../model/tokenizer.ts';
import type { TrainSample } from '../../train/batch.ts';
import { chatExample, examplesFromJsonl, type ChatRow } from '../../train/sft-data.ts';
import { Trainer } from '../../train/trainer.ts';
import { Progress } from './progress.ts';
import { jsonlLines } from '../../jsonl.ts';
import {
  configOrDefault, inputPath, intOption, loadModel, modelOption, modelPath, noPositionals, numberOption, outputDir, readBytes, readText,
  requireOption, stringOption, writeOutput, type Values,
} from './shared.ts';

/** The data files named by --data: the file itself, or every .parquet / .jsonl file in the folder. */
function dataFiles(ctx: CommandContext, path: string): string[] {
  const full = inputPath(ctx, path, 'training data');
  if (!statSync(full).isDirectory()) return [full];
  const files = readdirSync(full).filter((f) => /\.(parquet|jsonl)$/.test(f)).sort().map((f) => join(full, f));
  if (!files.length) throw new CliError(`${path} holds no .parquet or .jsonl files.`);
  return files;
}

async function examplesFromFile(ctx: CommandContext, file: string, tok: TextTokenizer, minScore: number | undefined): Promise<TrainSample[]> {
  const name = basename(file);
  try {
    if (file.endsWith('.parquet')) {
      const trajectories = await parquetToTrajectories(readBytes(ctx, file, 'Parquet file'), name);
      return trajectories
        .filter((t) => minScore === undefined || (t.judge_score !== null && t.judge_score >= minScore))
        .filter((t) => t.messages.some((m) => m.role === 'assistant'))
        .map((t) => chatExample({ messages: t.messages } as ChatRow, tok));
    }
    let text = readText(ctx, file, 'JSONL file');
    if (minScore !== undefined) {
      // Rows below the score are dropped; a bad line is kept, so examplesFromJsonl names it.
      text = jsonlLines(text).filter(({ value, error }) => {
        const score = error ? undefined : (value as { score?: number | null }).score;
        return score === undefined || (score !== null && score >= minScore);
      }).map((l) => l.text).join('\n');
    }
    return examplesFromJsonl(text, tok);
  } catch (e) {
    if (e instanceof CliError) throw e;
    throw new CliError(`${name}: ${(e as Error).message}`);
  }
}

/** Cuts examples to the model's context; drops those left with nothing to learn. */
function fitToContext(examples: TrainSample[], maxPositions: number): { kept: TrainSample[]; truncated: number } {
  let truncated = 0;
  const kept: TrainSample[] = [];
  for (const e of examples) {
    const cut = e.tokens.length > maxPositions ? { tokens: e.tokens.slice(0, maxPositions), mask: Array.from(e.mask).slice(0, maxPositions) } : e;
    if (cut !== e) truncated++;
    if (Array.from(cut.mask).some((m) => m > 0)) kept.push(cut);
  }
  return { kept, truncated };
}

async function loadSftExamples(ctx: CommandContext, values: Values, tok: TextTokenizer, maxPositions: number): Promise<{ examples: TrainSample[]; files: number; truncated: number }> {
  const files = dataFiles(ctx, requireOption(values, 'data', '--data export/trajectories.parquet'));
  const minScore = numberOption(values, 'min-score');
  const all: TrainSample[] = [];
  for (const f of files) all.push(...(await examplesFromFile(ctx, f, tok, minScore)));
  const { kept, truncated } = fitToContext(all, maxPositions);
  if (!kept.length) throw new CliError(`No training examples in ${stringOption(values, 'data')}${minScore !== undefined ? ` with score ≥ ${minScore}` : ''}.`);
  return { examples: kept, files: files.length, truncated };
}

export const sft: Command = {
  name: 'sft',
  summary: 'Supervised fine-tuning on Parquet / HF chat JSONL / instruction JSONL; writes a PEFT adapter zip and/or the merged model.',
  options: {
    data: { type: 'string', description: 'a .parquet or .jsonl file, or a folder of them', placeholder: 'dir|file' },
    epochs: { type: 'string', description: 'passes over the data (default: training.epochs, 3)', placeholder: 'n' },
    'learning-rate': { type: 'string', description: 'override training.learning_rate', placeholder: 'lr' },
    'min-score': { type: 'string', description: 'only examples whose score is at least this', placeholder: 'x' },
    model: modelOption,
    output: { type: 'string', default: 'sft-out', description: 'folder for adapter.zip (and the merged model with --merge)', placeholder: 'dir' },
    merge: { type: 'boolean', description: 'also write the merged model (config.json + model.safetensors) to --output' },
    config: { type: 'string', description: 'run config (lora, training.batch_size, …); default: the sft preset', placeholder: 'file' },
  },
  async run(values, positionals, ctx) {
    noPositionals(positionals, 'sft');
    const config = configOrDefault(ctx, stringOption(values, 'config'), presetConfig('sft'));
    config.training.method = 'sft';
    config.training.epochs = intOption(values, 'epochs') ?? config.training.epochs;
    config.training.learning_rate = numberOption(values, 'learning-rate') ?? config.training.learning_rate;
    const out = outputDir(ctx, stringOption(values, 'output') ?? 'sft-out');
    const modelDir = modelPath(ctx, values, config.model.base_model);
    const loaded = await loadModel(ctx, modelDir, config);
    const { model, tokenizer } = loaded;
    let trainer: Trainer | null = null;
    try {
      const { examples, files, truncated } = await loadSftExamples(ctx, values, tokenizer, model.config.maxPositions);
      ctx.out(`sft: ${examples.length} examples from ${files} file(s)${truncated ? ` (${truncated} cut to ${model.config.maxPositions} tokens)` : ''}, ${config.training.epochs} epochs, ${config.lora.r > 0 ? `LoRA r=${config.lora.r}` : 'full fine-tuning'}`);
      const perUpdate = config.training.batch_size * config.training.grad_accum_steps;
      const progress = new Progress(ctx, 'sft: updates', config.training.epochs * Math.ceil(examples.length / perUpdate));
      trainer = new Trainer({
        model, config, padId: tokenizer.padId, runId: config.name,
        collectGroups: () => Promise.reject(new Error('sft collects no rollouts')),
        onMetrics: (r) => progress.tick(1, `loss ${r.metrics['train/loss'].toFixed(4)}`),
      });
      const losses = await trainer.sftTrain(examples, config.training.epochs, ctx.signal);
      progress.finish();
      if (!losses.length) throw new CliError('sft: interrupted before the first update; nothing written.', 130);
      ctx.out(`sft: ${losses.length} updates, loss ${losses[0].toFixed(4)} → ${losses[losses.length - 1].toFixed(4)} (first → last update)`);
      const baseName = stringOption(values, 'model') ?? config.model.base_model;
      if (model.lora) {
        const peft = peftAdapterConfig(model, baseName) as PeftConfig;
        writeOutput(ctx, join(out, 'adapter.zip'), adapterZip(await exportLora(model), { config: peft, run: config, title: `${config.name} (SFT)` }));
        ctx.out(`wrote ${join(out, 'adapter.zip')}`);
        if (values.merge) mergeLora(model);
      }
      if (!model.lora && (values.merge || config.lora.r === 0)) {
        await saveModelToDir(model, tokenizer, out);
        ctx.out(`wrote the ${values.merge ? 'merged ' : ''}model (config.json, model.safetensors) to ${out}`);
      }
      if (ctx.signal.aborted) ctx.out(`interrupted after ${losses.length} updates; saved what was trained`);
    } finally {
      trainer?.dispose();
      model.dispose();
    }
  },
};
