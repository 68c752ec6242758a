/**
 * Supervised fine-tuning, the one operation (`spindle sft`): examples from exported trajectories
 * (Parquet), HF chat JSONL or instruction JSONL, rendered in the model's own chat format
 * (train/sft-data.ts), cut to its context, trained with Trainer.sftTrain, and returned as a PEFT
 * adapter zip and/or the merged model's files (LoRA), or the whole model's files (full fine-tuning,
 * `lora.r: 0`). Reading and writing files is the caller's; a stop signal ends after the current update
 * and still returns what was trained.
 */
import type { RunConfig } from '../../config/schema.ts';
import { isSuccess } from '../../contracts.ts';
import { parquetToTrajectories } from '../../export/parquet.ts';
import { adapterZip, peftAdapterConfig, type PeftConfig } from '../../export/peft.ts';
import type { HfConfigJson } from '../../model/config.ts';
import { saveModel } from '../../hub/hf.ts';
import { exportLora } from '../../model/lora.ts';
import type { TextTokenizer } from '../../tokenizer/tokenizer.ts';
import type { TransformerModel } from '../../model/transformer.ts';
import type { TrainSample } from '../../train/batch.ts';
import { chatExample, examplesFromRows, readSftRows } from '../../train/sft-data.ts';
import { Trainer } from '../../train/trainer.ts';
import { mergedModel } from './merged-export.ts';

/** One data file as read: `.parquet` (trajectories) or `.jsonl` (chat or instruction rows). */
export interface SftFile {
  name: string;
  bytes: Uint8Array;
}

/**
 * Which rows train: with `minScore`, those scoring at least it (rows without a score are kept, unscored
 * ones dropped); without, the successful ones (`success`, else a score at full marks: the one success rule),
 * rows that carry neither (instruction rows, another tool's data) kept. SFT imitates what it is given, so
 * by default it is given what worked.
 */
export interface SftSelection {
  minScore?: number;
}

function selected(row: { success?: boolean | null; score?: number | null }, { minScore }: SftSelection): boolean {
  if (minScore !== undefined) return row.score === undefined || (row.score !== null && row.score >= minScore);
  if (row.success !== undefined) return row.success === true;
  return row.score === undefined || (row.score !== null && isSuccess(row.score));
}

/** The selected examples of one file (see SftSelection), and how many rows the selection left out. Errors name the file. */
export async function sftExamples(
  file: SftFile,
  tok: TextTokenizer,
  selection: SftSelection = {},
): Promise<{ examples: TrainSample[]; leftOut: number }> {
  try {
    if (file.name.endsWith('.parquet')) {
      const trajectories = (await parquetToTrajectories(file.bytes, file.name)).filter((t) =>
        t.messages.some((m) => m.role === 'assistant'),
      );
      const kept = trajectories.filter((t) => selected({ success: t.success, score: t.judge_score }, selection));
      const examples = kept.map((t) => chatExample({ messages: t.messages, tools: t.tools }, tok));
      return { examples, leftOut: trajectories.length - kept.length };
    }
    // Read once; each kept row keeps its line in the file, so an error names the line the user opens.
    const rows = readSftRows(new TextDecoder().decode(file.bytes));
    const kept = rows.filter((r) =>
      selected(r.value as { success?: boolean | null; score?: number | null }, selection),
    );
    return { examples: examplesFromRows(kept, tok), leftOut: rows.length - kept.length };
  } catch (e) {
    throw new Error(`${file.name}: ${(e as Error).message}`, { cause: e });
  }
}

/** Cuts examples to the model's context; drops those left with nothing to learn. */
export function fitToContext(
  examples: TrainSample[],
  maxPositions: number,
): { kept: TrainSample[]; truncated: number } {
  let truncated = 0;
  const kept: TrainSample[] = [];
  for (const e of examples) {
    const cut =
      e.tokens.length > maxPositions
        ? { tokens: e.tokens.slice(0, maxPositions), mask: Array.from(e.mask).slice(0, maxPositions) }
        : e;
    if (cut !== e) truncated++;
    if (Array.from(cut.mask).some((m) => m > 0)) kept.push(cut);
  }
  return { kept, truncated };
}

export interface SftJob {
  model: TransformerModel;
  tokenizer: TextTokenizer;
  /** The base's own config.json, for the merged model. */
  hfConfig?: HfConfigJson | null;
  /** `training.method` sft; epochs, learning rate, batch and LoRA settings are read from it. */
  config: RunConfig;
  /** What the adapter names as its base (`base_model_name_or_path`). */
  baseModel: string;
  examples: TrainSample[];
  /** Also fold a LoRA adapter into the weights and return the merged model. */
  merge: boolean;
  signal?: AbortSignal;
  /** After each update, with its loss. */
  onUpdate?: (loss: number) => void;
}

export interface SftResult {
  /** The loss of every update; empty when stopped before the first (then nothing else is returned). */
  losses: number[];
  /** The PEFT adapter zip (LoRA runs). */
  adapter: Uint8Array | null;
  /** Hugging Face layout files: the merged model (LoRA with `merge`) or the fine-tuned model (full fine-tuning). */
  model: Map<string, Uint8Array> | null;
}

/** Trains `job.model` in place on the examples; the caller keeps and disposes the model. */
export async function runSft(job: SftJob): Promise<SftResult> {
  const { model, tokenizer, config } = job;
  const trainer = new Trainer({
    model,
    config,
    padId: tokenizer.padId,
    runId: config.name,
    collectGroups: () => Promise.reject(new Error('sft collects no rollouts')),
    onMetrics: (r) => job.onUpdate?.(r.metrics['train/loss']),
  });
  try {
    const losses = await trainer.sftTrain(job.examples, config.training.epochs, job.signal);
    if (!losses.length) return { losses, adapter: null, model: null };
    if (!model.lora) return { losses, adapter: null, model: await saveModel(model, tokenizer) };
    const tensors = await exportLora(model);
    const peft = peftAdapterConfig(model, job.baseModel) as PeftConfig;
    const adapter = adapterZip(tensors, { config: peft, run: config, title: `${config.name} (SFT)` });
    // The same fold as every merged export: the base weights (the adapter is held apart from them) plus B·A·alpha/r.
    const source = { model, tokenizer, hfConfig: job.hfConfig, baseModel: job.baseModel };
    const merged = job.merge ? await mergedModel(source, tensors, peft) : null;
    return { losses, adapter, model: merged };
  } finally {
    trainer.dispose();
  }
}
