import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.ts';
import { presetConfig } from '../../src/config/presets.ts';
import type { RunConfig } from '../../src/config/schema.ts';
import { stringifyRunConfig } from '../../src/config/yaml.ts';
import { initBackend } from '../../src/kernels/backend.ts';
import { ByteTokenizer } from '../../src/tokenizer/byte-tokenizer.ts';
import { presetConfig as modelPreset } from '../../src/model/config.ts';
import { saveModelToDir } from '../../src/hub/hf.ts';
import { TransformerModel } from '../../src/model/transformer.ts';

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'spindle-cli-'));
}

export interface CliResult {
  code: number;
  out: string;
  err: string;
}

/** Runs the CLI in-process, capturing its output. `signal` stands in for Ctrl-C. */
export async function cli(cwd: string, ...argv: string[]): Promise<CliResult> {
  return cliWithSignal(new AbortController().signal, cwd, ...argv);
}

export async function cliWithSignal(signal: AbortSignal, cwd: string, ...argv: string[]): Promise<CliResult> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { cwd, out: (l) => out.push(l), err: (l) => err.push(l), interactive: false, signal });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** A fresh nano model (byte tokenizer) saved in HF layout; stands in for models/spindle-base in tests. */
export async function nanoModelDir(seed = 1): Promise<string> {
  await initBackend({ forced: 'wasm' });
  const dir = join(tempDir(), 'nano');
  const tok = new ByteTokenizer();
  const model = TransformerModel.create(modelPreset('nano', tok.vocabSize), seed);
  await saveModelToDir(model, tok, dir);
  model.dispose();
  return dir;
}

/** The demo preset cut to test size (short turns, few items, no safety evals, one worker). */
export function tinyConfig(over: (c: RunConfig) => void = () => {}): RunConfig {
  const c = presetConfig('demo');
  c.sampling.max_new_tokens = 16;
  c.trajectory_collection.max_steps_per_trajectory = 2;
  c.trajectory_collection.n_workers = 1;
  c.training.group_size = 2;
  c.training.batch_size = 1;
  c.training.grad_accum_steps = 1;
  c.training.max_steps = 1;
  c.training.checkpoint_every = 1;
  c.training.eval_interval = 1;
  c.tasks.eval_items = 1;
  c.safety.enabled = false;
  c.lora.r = 4;
  c.lora.alpha = 8;
  over(c);
  return c;
}

/** Writes a config the way the app does (stringifyRunConfig); returns its file name. */
export function writeConfig(dir: string, config: RunConfig, name = 'run.yaml'): string {
  writeFileSync(join(dir, name), stringifyRunConfig(config));
  return name;
}
