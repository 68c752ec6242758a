/**
 * Builds the shipped base policy `models/spindle-base/` with the project's own code: expert transcripts
 * of every shipped environment (played through the real agent loop and sandbox) → assistant-only SFT
 * on the nano preset with the byte tokenizer → per-environment held-out success written to the model card.
 *
 * The model is deliberately small and briefly trained: it speaks ChatML, thinks in <think>, calls tools,
 * and is right often enough on easy items that GRPO has signal, and wrong often enough that GRPO has
 * room to improve it.
 *
 *   npm run model:base                  # train (resumes from models/spindle-base/.train-state if present)
 *   npm run model:base -- --steps 1500  # train longer
 *   npm run model:base -- --eval-only   # re-measure held-out success and rewrite the model card
 *
 * Resumable: every `--save-every` steps the weights, optimizer state and data cursor go to
 * models/spindle-base/.train-state/ (not committed); Ctrl-C saves and exits.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../src/model/backend.ts';
import { ByteTokenizer } from '../src/model/byte-tokenizer.ts';
import { presetConfig } from '../src/model/config.ts';
import { TransformerModel } from '../src/model/transformer.ts';
import { crossEntropyLoss } from '../src/model/logprobs.ts';
import { readSafetensors, writeSafetensors } from '../src/model/safetensors.ts';
import { loadHfModel, saveModelToDir } from '../src/model/hf.ts';
import { Optimizer, type OptimizerState } from '../src/train/optimizer.ts';
import { listEnvironments } from '../src/envs/registry.ts';
import { createRng, deriveSeed } from '../src/rng.ts';
import { expertTrajectory } from '../src/rollout/expert.ts';
import { evaluateModel, formatEvalTable } from './lib/evaluate-model.ts';
import { writeModelCard } from './lib/model-card.ts';

const OUT_DIR = 'models/spindle-base';
const STATE_DIR = `${OUT_DIR}/.train-state`;

const { values: args } = parseArgs({
  options: {
    steps: { type: 'string', default: '1200' },
    batch: { type: 'string', default: '12' },
    lr: { type: 'string', default: '3e-3' },
    'max-tokens': { type: 'string', default: '288' },
    'save-every': { type: 'string', default: '50' },
    'eval-items': { type: 'string', default: '30' },
    'eval-only': { type: 'boolean', default: false },
    fresh: { type: 'boolean', default: false },
    seed: { type: 'string', default: '7' },
  },
});
const STEPS = Number(args.steps);
const BATCH = Number(args.batch);
const MAX_TOKENS = Number(args['max-tokens']);
const SEED = Number(args.seed);

/** How the transcripts are spread: arith_tool (the learning benchmark) gets the most, at levels 1–3. */
const MIX: { env: string; levels: number[]; items: number }[] = [
  { env: 'arith_tool', levels: [1, 2, 3], items: 900 },
  { env: 'letter_count', levels: [1, 2], items: 250 },
  { env: 'text_reverse', levels: [1, 2], items: 250 },
  { env: 'countdown', levels: [1, 2], items: 200 },
  { env: 'shell_exec', levels: [1, 2], items: 250 },
  { env: 'git_repo', levels: [1, 2], items: 200 },
  // js_debug transcripts (450+ tokens) are left out: too long for this model's training budget.
];

interface Example {
  tokens: number[];
  /** Loss mask aligned with next-token targets: mask[t] = assistant_mask[t + 1]. */
  mask: number[];
}

async function buildDataset(tokenizer: ByteTokenizer): Promise<Example[]> {
  const examples: Example[] = [];
  const envs = new Map(listEnvironments().map((e) => [e.name, e]));
  for (const { env: name, levels, items } of MIX) {
    const env = envs.get(name);
    if (!env) throw new Error(`environment ${name} is not registered`);
    let kept = 0;
    for (let i = 0; kept < items && i < items * 3; i++) {
      const level = levels[i % levels.length];
      const task = env.generate(deriveSeed(SEED, name, i), level, 'train');
      const trajectory = await expertTrajectory(env, task, { tokenizer });
      if (trajectory.judge_score !== 1 || trajectory.tokens.length > MAX_TOKENS) continue;
      examples.push({ tokens: trajectory.tokens, mask: trajectory.assistant_mask.slice(1) });
      kept++;
    }
    console.log(`  ${name}: ${kept} transcripts`);
  }
  return examples;
}

function batchTensors(batch: Example[], padId: number): { ids: number[][]; mask: tf.Tensor2D } {
  const T = Math.max(...batch.map((e) => e.tokens.length));
  const ids = batch.map((e) => [...e.tokens, ...Array(T - e.tokens.length).fill(padId)]);
  const mask = batch.map((e) => [...e.mask, ...Array(T - 1 - e.mask.length).fill(0)]);
  return { ids, mask: tf.tensor2d(mask, [batch.length, T - 1]) };
}

async function saveState(model: TransformerModel, optimizer: Optimizer, step: number): Promise<void> {
  mkdirSync(STATE_DIR, { recursive: true });
  writeFileSync(`${STATE_DIR}/weights.safetensors`, writeSafetensors(await model.getWeights()));
  const opt = await optimizer.exportState();
  const tensors = new Map<string, { shape: number[]; data: Float32Array }>();
  opt.m.forEach((m, i) => tensors.set(`m.${i}`, { shape: [m.length], data: m }));
  opt.v.forEach((v, i) => tensors.set(`v.${i}`, { shape: [v.length], data: v }));
  writeFileSync(`${STATE_DIR}/optimizer.safetensors`, writeSafetensors(tensors, { step: String(opt.step) }));
  writeFileSync(`${STATE_DIR}/progress.json`, JSON.stringify({ step }));
}

function loadState(model: TransformerModel, optimizer: Optimizer): number {
  if (!existsSync(`${STATE_DIR}/progress.json`)) return 0;
  model.setWeights(readSafetensors(readFileSync(`${STATE_DIR}/weights.safetensors`)).tensors);
  const file = readSafetensors(readFileSync(`${STATE_DIR}/optimizer.safetensors`));
  const count = model.trainableVariables().length;
  const state: OptimizerState = {
    step: Number(file.metadata.step),
    m: Array.from({ length: count }, (_, i) => file.tensors.get(`m.${i}`)!.data as Float32Array),
    v: Array.from({ length: count }, (_, i) => file.tensors.get(`v.${i}`)!.data as Float32Array),
    pending: null,
    pendingCount: 0,
  };
  optimizer.importState(state);
  return JSON.parse(readFileSync(`${STATE_DIR}/progress.json`, 'utf8')).step as number;
}

async function train(tokenizer: ByteTokenizer): Promise<TransformerModel> {
  console.log('building expert transcripts…');
  const data = await buildDataset(tokenizer);
  const model = TransformerModel.create(presetConfig('nano', tokenizer.vocabSize), SEED);
  const optimizer = new Optimizer(model.trainableVariables(), { kind: 'adamw', learningRate: Number(args.lr), warmupSteps: 30, weightDecay: 0.01, gradClip: 1 });
  if (args.fresh) rmSync(STATE_DIR, { recursive: true, force: true });
  let step = loadState(model, optimizer);
  if (step) console.log(`resumed at step ${step}`);
  let stop = false;
  process.on('SIGINT', () => (stop = true));
  const started = performance.now();
  let smoothed = 0;
  while (step < STEPS && !stop) {
    // The batch for a step depends only on (seed, step): a resumed run sees the same batches.
    const rng = createRng(deriveSeed(SEED, 'batch', step));
    const batch = Array.from({ length: BATCH }, () => data[rng.int(0, data.length - 1)]);
    const { ids, mask } = batchTensors(batch, tokenizer.padId);
    const { value, grads } = tf.variableGrads(() => crossEntropyLoss(model, ids, mask, { dropoutSeed: step }), model.trainableVariables());
    optimizer.accumulate(model.trainableVariables().map((v) => grads[v.name]));
    tf.dispose(grads);
    mask.dispose();
    const { gradNorm } = await optimizer.step();
    const loss = (await value.data())[0];
    value.dispose();
    step++;
    smoothed = step === 1 ? loss : 0.95 * smoothed + 0.05 * loss;
    if (step % 10 === 0) {
      const rate = (performance.now() - started) / 1000 / step;
      console.log(`step ${step}/${STEPS} loss ${smoothed.toFixed(3)} grad_norm ${gradNorm.toFixed(2)} (${rate.toFixed(2)} s/step)`);
    }
    if (step % Number(args['save-every']) === 0 || stop) await saveState(model, optimizer, step);
  }
  await saveState(model, optimizer, step);
  if (stop) {
    console.log(`interrupted at step ${step}; run again to resume`);
    process.exit(130);
  }
  return model;
}

async function main(): Promise<void> {
  await initBackend();
  const tokenizer = new ByteTokenizer();
  let model: TransformerModel;
  if (args['eval-only']) {
    model = (await loadHfModel(OUT_DIR)).model;
  } else {
    model = await train(tokenizer);
    mkdirSync(OUT_DIR, { recursive: true });
    await saveModelToDir(model, tokenizer, OUT_DIR);
  }
  console.log('evaluating on the held-out split…');
  const results = await evaluateModel(model, tokenizer, { items: Number(args['eval-items']), seed: SEED });
  const facts = { steps: STEPS, batch: BATCH, learningRate: Number(args.lr), maxTokens: MAX_TOKENS, seed: SEED, mix: MIX, results };
  writeFileSync(`${OUT_DIR}/eval.json`, JSON.stringify(facts, null, 2));
  writeModelCard({ dir: OUT_DIR, ...facts, trainSeconds: null });
  console.log(formatEvalTable(results));
}

await main();
