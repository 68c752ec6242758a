/**
 * Makes a trained BPE base (train.py's folder: config.json, model.safetensors, reference-logits.json) a
 * model folder in Hugging Face layout that Spindle and transformers both load, then checks it as Spindle
 * loads it:
 *
 *   tokenizer.json          the build's BPE tokenizer (tokenizer.py)
 *   tokenizer_config.json   its special tokens and Spindle's chat template (tokenizer/spindle-chat-template.ts),
 *                           which Spindle recognises and renders natively, so prompts are the ones it trained on
 *   generation_config.json  every turn-ending id as `eos_token_id`, so transformers' generate stops where Spindle does
 *
 * Checked: Spindle's forward reproduces the builder's logits (as tests/model/shipped-model.test.ts does for the
 * shipped folder) and the chat format is Spindle's own.
 *
 *   npx tsx scripts/base-model/package.ts --dir <build>/d192 [--tokenizer <build>/tokenizer.json]
 */
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../../src/kernels/backend.ts';
import type { HfConfigJson } from '../../src/model/config.ts';
import { loadHfModel } from '../../src/hub/hf.ts';
import { HfTokenizer } from '../../src/tokenizer/hf-tokenizer.ts';
import { spindleTokenizerConfig } from '../../src/tokenizer/spindle-chat-template.ts';
import { generationConfig } from '../../src/pipeline/operations/merged-export.ts';
import { chatFormatSummary } from '../../src/format/conversation.ts';
import { buildDir } from './build-dir.ts';

const { values: args } = parseArgs({
  options: { dir: { type: 'string' }, tokenizer: { type: 'string', default: join(buildDir(), 'tokenizer.json') } },
});
if (!args.dir) throw new Error('--dir <folder train.py wrote> is required');
const dir = args.dir;
const json = (name: string) => JSON.parse(readFileSync(join(dir, name), 'utf8'));
const write = (name: string, value: unknown) => writeFileSync(join(dir, name), `${JSON.stringify(value, null, 2)}\n`);

const config = json('config.json') as HfConfigJson;
copyFileSync(args.tokenizer, join(dir, 'tokenizer.json'));
const tokenizerConfig = spindleTokenizerConfig(config.max_position_embeddings ?? 2048);
write('tokenizer_config.json', tokenizerConfig);
const tokenizer = HfTokenizer.fromJson(json('tokenizer.json'), tokenizerConfig, { eosTokenId: config.eos_token_id });
if (tokenizer.eosId !== config.eos_token_id || tokenizer.padId !== config.pad_token_id) {
  throw new Error(
    `config.json's eos/pad ids (${config.eos_token_id}, ${config.pad_token_id}) are not the tokenizer's (${tokenizer.eosId}, ${tokenizer.padId}): train with the config that names them`,
  );
}
write('generation_config.json', generationConfig(tokenizer, config));

await initBackend();
const loaded = await loadHfModel(dir);
const reference = json('reference-logits.json') as { tokens: number[]; positions: number[]; logits: number[][] };
const logits = tf.tidy(() => loaded.model.forward([reference.tokens]).logits.squeeze([0])).arraySync() as number[][];
let worst = 0;
reference.positions.forEach((p, i) =>
  logits[p].forEach((v, j) => {
    worst = Math.max(worst, Math.abs(v - reference.logits[i][j]));
  }),
);
if (worst > 1e-3)
  throw new Error(`Spindle's logits differ from the builder's by up to ${worst.toExponential(2)} (allowed 1e-3)`);
const format = chatFormatSummary(loaded.tokenizer);
if (!format.startsWith("Spindle's own chat template"))
  throw new Error(`the packaged tokenizer's chat format is not Spindle's own: ${format}`);
console.log(
  `${dir}: HF layout written; Spindle's logits match the builder's (largest difference ${worst.toExponential(2)}); chat format: ${format}`,
);
loaded.model.dispose();
