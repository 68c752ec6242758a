/**
 * Builds the shipped in-browser judge model into models/judge/:
 *   model.onnx, tokenizer.json, judge_config.json, build-report.json
 * Run: `npx tsx scripts/build-judge-model.ts` (deterministic: same seed → same files; ~10 s on 2 cores).
 *
 * Steps: generate synthetic trajectories (scripts/judge-model/synthetic.ts), render them exactly as
 * OnnxJudge does, build a word-level WordPiece tokenizer.json from the training texts, train a
 * bag-of-embeddings classifier in TypeScript, write it as ONNX, then load the written files through
 * OnnxJudge (onnxruntime-web) and check that ORT agrees with the training forward pass and measure
 * accuracy on a held-out set generated from another seed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import {
  DEFAULT_JUDGE_MODEL_CONFIG,
  encodeForJudge,
  OnnxJudge,
  type JudgeModelConfig,
} from '../src/judge/onnx-judge.ts';
import { SHIPPED_JUDGE_DIR } from '../src/judge/onnx-node.ts';
import { renderTrajectory } from '../src/judge/render.ts';
import { buildJudgeOnnx } from './judge-model/graph.ts';
import { makeDataset, VARIANTS, type Example } from './judge-model/synthetic.ts';
import { rng } from './judge-model/synthetic.ts';
import { buildTokenizerJson, collectVocabulary, initWeights, predict, train } from './judge-model/train.ts';

const SEED = 20240601;
const HELD_OUT_SEED = 777;
const TRAIN_SIZE = 3000;
const TEST_SIZE = 1000;
const HYPER = { dim: 16, hidden: 16, epochs: 8, batchSize: 32, learningRate: 0.01, minCount: 3, maxWords: 2500 };

const config: JudgeModelConfig = { ...DEFAULT_JUDGE_MODEL_CONFIG };
// Must match OnnxJudge.renderInput.
const textOf = (e: Example): string =>
  `Task: ${e.trajectory.task_description}\n${renderTrajectory(e.trajectory, config.render)}`;

async function main(): Promise<void> {
  const outDir = process.argv[2] ?? SHIPPED_JUDGE_DIR;
  const started = Date.now();
  const trainSet = makeDataset(SEED, TRAIN_SIZE);
  const testSet = makeDataset(HELD_OUT_SEED, TEST_SIZE);
  const trainTexts = trainSet.map(textOf);

  const words = collectVocabulary(trainTexts, HYPER.minCount, HYPER.maxWords);
  const tokenizerJson = buildTokenizerJson(words);
  const tokenizer = new Tokenizer(tokenizerJson, {});
  const vocabSize = Object.keys((tokenizerJson.model as { vocab: Record<string, number> }).vocab).length;
  const encode = (text: string) => encodeForJudge(tokenizer, text, config);

  const random = rng(SEED);
  const options = {
    vocab: vocabSize,
    dim: HYPER.dim,
    hidden: HYPER.hidden,
    epochs: HYPER.epochs,
    batchSize: HYPER.batchSize,
    learningRate: HYPER.learningRate,
    random,
  };
  const weights = initWeights(options);
  const finalLoss = train(
    weights,
    trainSet.map((e, i) => ({ ids: encode(trainTexts[i]), label: e.label })),
    options,
  );

  const metadata = {
    spindle_judge: 'synthetic-trajectory-quality',
    seed: String(SEED),
    labels: '1',
    output: 'sigmoid(logits[:, 0]) = p(good)',
  };
  const onnx = buildJudgeOnnx(weights, metadata);
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'model.onnx'), onnx);
  writeFileSync(join(outDir, 'tokenizer.json'), JSON.stringify(tokenizerJson));
  writeFileSync(join(outDir, 'judge_config.json'), JSON.stringify(config, null, 2) + '\n');

  // Check the written artifact, through the same code path users run.
  const judge = await OnnxJudge.create({ model: onnx, tokenizer: tokenizerJson, config });
  const testTexts = testSet.map(textOf);
  const ortScores: number[] = [];
  for (let i = 0; i < testTexts.length; i += 100)
    ortScores.push(...(await judge.scoreTexts(testTexts.slice(i, i + 100))));
  let maxDiff = 0;
  testTexts.forEach((t, i) => (maxDiff = Math.max(maxDiff, Math.abs(predict(weights, encode(t)) - ortScores[i]))));
  const correct = (e: Example, p: number) => (p >= 0.5 ? 1 : 0) === e.label;
  const accuracy = testSet.filter((e, i) => correct(e, ortScores[i])).length / testSet.length;
  const perVariant = Object.fromEntries(
    VARIANTS.map((v) => {
      const idx = testSet.flatMap((e, i) => (e.variant === v ? [i] : []));
      return [
        v,
        {
          n: idx.length,
          accuracy: round(idx.filter((i) => correct(testSet[i], ortScores[i])).length / Math.max(1, idx.length)),
        },
      ];
    }),
  );
  const trainAccuracy =
    trainSet.filter((e, i) => correct(e, predict(weights, encode(trainTexts[i])))).length / trainSet.length;
  await judge.release();

  const report = {
    built_by: 'npx tsx scripts/build-judge-model.ts',
    seed: SEED,
    held_out_seed: HELD_OUT_SEED,
    train_size: TRAIN_SIZE,
    test_size: TEST_SIZE,
    hyperparameters: HYPER,
    vocab_size: vocabSize,
    parameters: weights.embed.length + weights.w1.length + weights.b1.length + weights.w2.length + weights.b2.length,
    model_bytes: onnx.length,
    final_train_loss: round(finalLoss),
    train_accuracy: round(trainAccuracy),
    held_out_accuracy: round(accuracy),
    held_out_per_variant: perVariant,
    max_abs_diff_ort_vs_training_forward: maxDiff,
    build_seconds: round((Date.now() - started) / 1000),
  };
  writeFileSync(join(outDir, 'build-report.json'), JSON.stringify(report, null, 2) + '\n');
  console.log(JSON.stringify(report, null, 2));
  if (maxDiff > 1e-4)
    throw new Error(
      `ONNX output differs from the training forward pass by ${maxDiff}; the graph and train.ts disagree.`,
    );
}

function round(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}

await main();
