/**
 * WebGPU benchmark (`npx tsx bench/webgpu.bench.ts`), for a machine with a GPU: the training step and
 * KV-cached generation on tfjs-webgpu with Spindle's kernels (Dawn in Node, bench/lib/node-webgpu.ts)
 * against tfjs-wasm and PyTorch (CUDA where torch sees a GPU, else CPU) on the same shapes, at the micro
 * preset and at SmolLM2-135M's shapes (random weights).
 *
 * - Train step: full fine-tuning (forward, backward, Adam through src/train/optimizer.ts, which runs the
 *   fused Adam kernel on WebGPU), `steps` timed after one warm-up step, median and best; the step ends
 *   when the loss and the last updated weight have been read back, so queued GPU work is counted.
 *   tfjs-wasm skips the 135M step (its 4 GiB heap does not hold 135M weights, gradients and Adam state).
 * - LoRA GRPO update: bench/lib/lora-update.ts's update (r 8 on q/v, AdamW), `loraRows` × `loraSeq` tokens
 *   in one micro-batch, timed after one warm-up update; training tokens/s = rows × seq / median seconds.
 *   tfjs-wasm runs it at the micro shape only (bench/model-135m.bench.ts has its 135M figure on 2 cores).
 * - Generation: greedy decoding with the KV cache, tokens/s summed over the rows, at batch 1 and 16.
 *
 * BENCH_SMOKE=1 runs a tiny model with two steps and eight tokens: it checks the script on a machine
 * without a GPU (SwiftShader), and its figures mean nothing. Results go to bench/results/webgpu.json
 * (smoke: printed only), or to BENCH_OUT when set. The adapter, the machine and its load are recorded.
 */
import * as tf from '@tensorflow/tfjs';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname } from 'node:path';
import { initBackend } from '../src/kernels/backend.ts';
import { fromHfConfig, presetConfig, type ModelConfig } from '../src/model/config.ts';
import { crossEntropyLoss } from '../src/model/logprobs.ts';
import { generate } from '../src/model/sampling.ts';
import { TransformerModel } from '../src/model/transformer.ts';
import { Optimizer } from '../src/train/optimizer.ts';
import { installNodeWebGpu } from './lib/node-webgpu.ts';
import { runTorch, torchAvailability, type TorchRun } from './lib/torch-reference.ts';
import { SMOLLM2_135M } from './lib/smollm2.ts';
import { BENCH_LORA, loraUpdate } from './lib/lora-update.ts';

const SMOKE = process.env.BENCH_SMOKE === '1';

interface Shape {
  name: string;
  config: ModelConfig;
  batch: number;
  seq: number;
  steps: number;
  genTokens: number;
  loraRows: number;
  loraSeq: number;
  /** Backends that skip the train step here, with the reason. */
  skipTrain: Partial<Record<Backend, string>>;
  /** Backends that skip the LoRA update here, with the reason. */
  skipLora: Partial<Record<Backend, string>>;
}

type Backend = 'webgpu' | 'wasm';

const SHAPES: Shape[] = SMOKE
  ? [
      {
        name: 'smoke',
        config: presetConfig('nano', 266, { numLayers: 2 }),
        batch: 2,
        seq: 16,
        steps: 2,
        genTokens: 8,
        loraRows: 2,
        loraSeq: 16,
        skipTrain: {},
        skipLora: {},
      },
    ]
  : [
      {
        name: 'micro',
        config: presetConfig('micro', 266),
        batch: 8,
        seq: 64,
        steps: 8,
        genTokens: 128,
        loraRows: 8,
        loraSeq: 64,
        skipTrain: {},
        skipLora: {},
      },
      {
        name: 'smollm2-135m',
        config: fromHfConfig(SMOLLM2_135M),
        batch: 4,
        seq: 64,
        steps: 4,
        genTokens: 32,
        loraRows: 16,
        loraSeq: 128,
        skipTrain: { wasm: "tfjs-wasm's 4 GiB heap cannot hold 135M weights, gradients and Adam state" },
        skipLora: { wasm: 'one update takes minutes on wasm here; bench/model-135m.bench.ts measures it on 2 cores' },
      },
    ];
const GEN_BATCHES = [1, 16];

interface Timing {
  median_ms: number;
  best_ms: number;
}

interface LoraFigures extends Timing {
  tokens_per_s: number;
}

interface BackendFigures {
  train: Timing | { skipped: string };
  lora: LoraFigures | { skipped: string };
  generation: { batch: number; tokens_per_s: number }[];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const load = () => os.loadavg().map((l) => Number(l.toFixed(2)));
const tokensFor = (shape: Shape, rows: number, length: number) =>
  Array.from({ length: rows }, (_, b) =>
    Array.from({ length }, (_, t) => (b * 31 + t * 7) % Math.min(256, shape.config.vocabSize)),
  );

async function trainSteps(shape: Shape): Promise<Timing> {
  const model = TransformerModel.create(shape.config, 1);
  const vars = model.trainableVariables();
  const optimizer = new Optimizer(vars, {
    kind: 'adam',
    learningRate: 3e-4,
    warmupSteps: 0,
    weightDecay: 0,
    gradClip: 0,
  });
  const tokens = tokensFor(shape, shape.batch, shape.seq);
  const step = async () => {
    const start = performance.now();
    const { value, grads } = tf.variableGrads(() => crossEntropyLoss(model, tokens), vars);
    optimizer.accumulate(vars.map((v) => grads[v.name]));
    tf.dispose(grads);
    await optimizer.step();
    await value.data();
    value.dispose();
    await vars[vars.length - 1].data(); // the last update has run
    return performance.now() - start;
  };
  try {
    await step(); // kernels compiled, buffers allocated
    const times: number[] = [];
    for (let i = 0; i < shape.steps; i++) times.push(await step());
    return { median_ms: median(times), best_ms: Math.min(...times) };
  } finally {
    optimizer.dispose();
    model.dispose();
  }
}

const LORA_UPDATES = 3;

async function loraSteps(shape: Shape): Promise<LoraFigures> {
  const model = TransformerModel.create(shape.config, 4);
  const update = loraUpdate(model, shape.loraRows, shape.loraSeq, 1);
  try {
    const timed = async () => {
      const start = performance.now();
      await update.run(); // ends with the loss read back
      await model.trainableVariables()[0].data();
      return performance.now() - start;
    };
    await timed(); // kernels compiled, buffers allocated
    const times: number[] = [];
    for (let i = 0; i < LORA_UPDATES; i++) times.push(await timed());
    const med = median(times);
    return {
      median_ms: med,
      best_ms: Math.min(...times),
      tokens_per_s: (shape.loraRows * shape.loraSeq) / (med / 1000),
    };
  } finally {
    update.dispose();
    model.dispose();
  }
}

async function generation(shape: Shape): Promise<BackendFigures['generation']> {
  const model = TransformerModel.create(shape.config, 2);
  try {
    await generate(model, [[1, 2]], { maxNewTokens: 4, temperature: 0, seed: 1 }); // warm-up
    const out: BackendFigures['generation'] = [];
    for (const batch of GEN_BATCHES) {
      const start = performance.now();
      const r = await generate(model, tokensFor(shape, batch, 4), {
        maxNewTokens: shape.genTokens,
        temperature: 0,
        seed: 1,
        stopTokens: [],
      });
      out.push({ batch, tokens_per_s: r.tokens.flat().length / ((performance.now() - start) / 1000) });
    }
    return out;
  } finally {
    model.dispose();
  }
}

async function measure(backend: Backend, shape: Shape): Promise<BackendFigures> {
  await initBackend({ forced: backend });
  const skip = shape.skipTrain[backend];
  const train = skip ? { skipped: skip } : await trainSteps(shape);
  const skipLora = shape.skipLora[backend];
  const lora = skipLora ? { skipped: skipLora } : await loraSteps(shape);
  return { train, lora, generation: await generation(shape) };
}

function torchFigures(shape: Shape, device: string) {
  const train = runTorch<TorchRun>(shape.config, { batch: shape.batch, seq: shape.seq, steps: shape.steps, device });
  const generation = GEN_BATCHES.map((batch) => {
    const r = runTorch<{ tokens_per_s: number }>(shape.config, {
      batch,
      seq: 0,
      steps: shape.genTokens,
      generate: true,
      device,
    });
    return { batch, ...('skipped' in r ? r : { tokens_per_s: r.tokens_per_s }) };
  });
  return {
    train:
      'skipped' in train
        ? train
        : {
            median_ms: median(train.times),
            best_ms: Math.min(...train.times),
            torch: train.torch,
            device: train.device,
          },
    generation,
  };
}

const fmt = (t: Timing | { skipped: string }) =>
  'skipped' in t ? `skipped (${t.skipped})` : `median ${t.median_ms.toFixed(1)} ms, best ${t.best_ms.toFixed(1)} ms`;

const loadBefore = load();
const gpu = await installNodeWebGpu();
const torch = torchAvailability();
const torchDevice = torch.cuda ? 'cuda' : 'cpu';
console.log(
  `WebGPU adapter: ${gpu.description}${gpu.software ? " (software: figures are not a GPU's)" : ''}; PyTorch on ${torch.torch ? torchDevice : `none (${torch.reason})`}`,
);
console.log(
  `load average before: ${loadBefore.join(' ')} (${os.cpus().length} cores)${SMOKE ? ' · SMOKE run: tiny shapes, figures mean nothing' : ''}`,
);

const results: Record<string, unknown> = {};
for (const shape of SHAPES) {
  const webgpu = await measure('webgpu', shape);
  const wasm = await measure('wasm', shape);
  const reference = torchFigures(shape, torchDevice);
  results[shape.name] = {
    batch: shape.batch,
    seq: shape.seq,
    parameters: shape.config,
    webgpu,
    wasm,
    torch: reference,
  };
  console.log(`\n${shape.name}: train step (batch ${shape.batch} × ${shape.seq}, full fine-tuning, Adam)`);
  console.log(
    `  webgpu: ${fmt(webgpu.train)}\n  wasm:   ${fmt(wasm.train)}\n  torch ${torchDevice}: ${fmt(reference.train)}`,
  );
  if (!('skipped' in webgpu.train) && !('skipped' in reference.train))
    console.log(`  webgpu / torch: ${(webgpu.train.median_ms / reference.train.median_ms).toFixed(2)}× (median)`);
  if (!('skipped' in webgpu.train) && !('skipped' in wasm.train))
    console.log(`  wasm / webgpu: ${(wasm.train.median_ms / webgpu.train.median_ms).toFixed(2)}× (median)`);
  console.log(`  LoRA GRPO update (${BENCH_LORA}, ${shape.loraRows} × ${shape.loraSeq}):`);
  for (const [name, figures] of [
    ['webgpu', webgpu.lora],
    ['wasm', wasm.lora],
  ] as const) {
    console.log(
      `    ${name}: ${'skipped' in figures ? fmt(figures) : `${fmt(figures)}, ${figures.tokens_per_s.toFixed(0)} training tok/s`}`,
    );
  }
  for (const [i, { batch }] of webgpu.generation.entries()) {
    const ref = reference.generation[i];
    const refText = 'tokens_per_s' in ref ? `${ref.tokens_per_s.toFixed(0)} tok/s` : `skipped (${ref.skipped})`;
    console.log(
      `  generation batch ${String(batch).padStart(2)}: webgpu ${webgpu.generation[i].tokens_per_s.toFixed(0)} tok/s · wasm ${wasm.generation[i].tokens_per_s.toFixed(0)} tok/s · torch ${refText}`,
    );
  }
}
const loadAfter = load();
console.log(`\nload average after: ${loadAfter.join(' ')}`);

const report = {
  benchmark: 'webgpu',
  date: new Date().toISOString(),
  smoke: SMOKE,
  adapter: { description: gpu.description, software: gpu.software },
  machine: {
    load_average_before: loadBefore,
    load_average_after: loadAfter,
    cpu: os.cpus()[0]?.model,
    cores: os.cpus().length,
    node: process.version,
    torch_device: torchDevice,
  },
  results,
};
const target = process.env.BENCH_OUT ?? (SMOKE ? null : 'bench/results/webgpu.json');
if (target) {
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, JSON.stringify(report, null, 2) + '\n');
  console.log(`wrote ${target}`);
}
