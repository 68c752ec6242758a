/**
 * A run on a model with its own (BPE) tokenizer: the Node rollout workers tokenise with that tokenizer,
 * not with bytes, so what they store is what the engine sampled and what the trainer trains on.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Trajectory } from '../../src/contracts.ts';
import type { ModelConfig } from '../../src/model/config.ts';
import { HfTokenizer } from '../../src/tokenizer/hf-tokenizer.ts';
import { saveModelToDir } from '../../src/hub/hf.ts';
import { TransformerModel } from '../../src/model/transformer.ts';
import { initBackend } from '../../src/kernels/backend.ts';
import { openFileStore } from '../../src/store/file-store.ts';
import { listRuns, TrajectoryCommons } from '../../src/store/index.ts';
import { tinyTokenizerJson } from '../tokenizer/tiny-hf-tokenizer.ts';
import { ChatTemplate } from '../../src/format/chat-template.ts';
import { familyTokenizer } from '../format/family-templates.ts';
import { cli, tempDir, tinyConfig, writeConfig } from './helpers.ts';

const tiny: ModelConfig = {
  vocabSize: 264,
  hiddenSize: 16,
  intermediateSize: 24,
  numLayers: 1,
  numHeads: 2,
  numKvHeads: 1,
  headDim: 8,
  maxPositions: 1024,
  ropeTheta: 1e6,
  rmsNormEps: 1e-6,
  tieWordEmbeddings: true,
  attentionBias: true,
  family: 'qwen2',
};

/** Runs `spindle train` on the folder's run.yaml and reads back the training episodes it stored. */
async function trainAndRead(dir: string): Promise<Trajectory[]> {
  const trained = await cli(dir, 'train', '--config', 'run.yaml');
  expect(trained.code, trained.err).toBe(0);
  const store = await openFileStore(join(dir, '.spindle'));
  const [run] = await listRuns(store);
  const stored: Trajectory[] = [];
  for await (const t of new TrajectoryCommons(store).load({ run_id: run.id, split: 'train' })) stored.push(t);
  await store.close();
  return stored;
}

describe("rollout workers and the run model's tokenizer", () => {
  it("store tokens of the model's BPE tokenizer, merges included", async () => {
    await initBackend({ forced: 'wasm' });
    const dir = tempDir();
    const modelDir = join(dir, 'bpe-model');
    const model = TransformerModel.create(tiny, 3);
    const tokenizer = HfTokenizer.fromJson(tinyTokenizerJson(), { eos_token: '<|im_end|>' });
    await saveModelToDir(model, tokenizer, modelDir);
    model.dispose();
    writeConfig(
      dir,
      tinyConfig((c) => {
        c.model.base_model = modelDir;
        c.training.eval_at_start = false;
        c.training.eval_interval = 100;
      }),
    );
    const stored = await trainAndRead(dir);
    expect(stored.length).toBeGreaterThan(0);
    for (const t of stored) {
      // The prompt ("…the…") as this tokenizer encodes it: "he" is one merged token (256), never the bytes h, e.
      const prompt = t.tokens.filter((_, i) => t.assistant_mask[i] === 0);
      expect(prompt).toContain(256);
      expect(prompt.some((id, i) => id === 104 && prompt[i + 1] === 101)).toBe(false);
    }
  }, 120_000);

  it("with the model's own tool-calling template: two updates, and every stored episode is the template's rendering", async () => {
    await initBackend({ forced: 'wasm' });
    const dir = tempDir();
    const modelDir = join(dir, 'qwen-style-model');
    // A Qwen2.5-style folder: its BPE tokenizer with the ChatML and <tool_call> special tokens, its template in tokenizer_config.json.
    const tokenizer = familyTokenizer('qwen2.5');
    const model = TransformerModel.create({ ...tiny, vocabSize: tokenizer.vocabSize }, 4);
    await saveModelToDir(model, tokenizer, modelDir);
    model.dispose();
    writeConfig(
      dir,
      tinyConfig((c) => {
        c.model.base_model = modelDir;
        c.training.max_steps = 2;
        c.trajectory_collection.n_workers = 2;
        c.training.eval_at_start = false;
        c.training.eval_interval = 100;
      }),
    );
    const stored = await trainAndRead(dir);
    expect(stored.length).toBeGreaterThanOrEqual(4);
    const template = ChatTemplate.fromTokenizerConfig(tokenizer.configJson, {
      tools: true,
      hasToken: (t) => tokenizer.tokenToId(t) !== undefined,
    })!;
    for (const t of stored) {
      // What the workers tokenised and the engine sampled is the template's text for the stored messages, tools included.
      expect(tokenizer.decode(t.tokens)).toBe(template.render(t.messages, { tools: t.tools }));
      expect(tokenizer.decode(t.tokens)).toContain('"name": "calc"');
    }
  }, 180_000);
});
