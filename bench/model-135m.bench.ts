/**
 * A 135M-class model on tfjs-wasm in Node (`npx tsx bench/model-135m.bench.ts`): SmolLM2-135M-Instruct's
 * config.json shapes (30 layers, hidden 576, 9/3 heads, SwiGLU 1536, vocab 49,152, tied embeddings) with
 * random weights, saved in the HF layout (float32 safetensors) and loaded back through
 * loadHfModel. It measures what a user of "bring your own model" waits for: load time, memory, greedy
 * generation tokens/s at batch 1 with the KV cache, and one LoRA GRPO update (r 8 on q/v, 8 samples ×
 * 64 tokens). Reference in the same run: the same measurements on the micro preset (4.8M parameters),
 * so the per-parameter cost of the large model is a ratio, not a bare time. Writes bench/results/model-135m.json.
 */
import * as tf from '@tensorflow/tfjs';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { initBackend } from '../src/kernels/backend.ts';
import { ByteTokenizer } from '../src/tokenizer/byte-tokenizer.ts';
import { fromHfConfig, presetConfig, type ModelConfig } from '../src/model/config.ts';
import { loadHfModel, saveModelToDir } from '../src/hub/hf.ts';
import { estimateMemory, formatBytes } from '../src/model/memory.ts';
import { generate } from '../src/model/sampling.ts';
import { TransformerModel } from '../src/model/transformer.ts';
import { BENCH_LORA, loraUpdate } from './lib/lora-update.ts';
import { SMOLLM2_135M } from './lib/smollm2.ts';

const GEN_TOKENS = Number(process.env.BENCH_GEN ?? 32);
const SAMPLES = 8;
const SEQ = 64;
/** Micro-batches per update (BENCH_ACCUM): one sequence each keeps the 135M activations inside tfjs-wasm's heap. */
const ACCUM = Number(process.env.BENCH_ACCUM ?? SAMPLES);

interface Figures {
  parameters: number;
  load_seconds: number;
  tensor_bytes: number;
  rss_bytes: number;
  estimate_train_peak_bytes: number;
  generate_tokens_per_s: number;
  grpo_update_seconds: number;
}

async function measure(label: string, config: ModelConfig): Promise<Figures> {
  const dir = mkdtempSync(join(os.tmpdir(), 'spindle-135m-'));
  try {
    const stage = (what: string) =>
      process.env.BENCH_TRACE && console.log(`  ${label}: ${what} (tensors ${formatBytes(tf.memory().numBytes)})`);
    stage('create');
    const built = TransformerModel.create(config, 3);
    await saveModelToDir(built, new ByteTokenizer(), dir);
    built.dispose();
    stage('load');
    const before = tf.memory().numBytes;
    const t0 = performance.now();
    const { model } = await loadHfModel(dir);
    const loadSeconds = (performance.now() - t0) / 1000;
    const tensorBytes = tf.memory().numBytes - before;
    await generate(model, [[256, 10]], { maxNewTokens: 2, temperature: 0, seed: 1 }); // kernels set up
    stage('generate');
    const g0 = performance.now();
    const out = await generate(model, [[256, 10, 20, 30]], {
      maxNewTokens: GEN_TOKENS,
      temperature: 0,
      seed: 1,
      stopTokens: [],
    });
    const tokensPerS = out.tokens[0].length / ((performance.now() - g0) / 1000);

    const update = loraUpdate(model, SAMPLES, SEQ, ACCUM);
    stage('update');
    const u0 = performance.now();
    await update.run();
    const updateSeconds = (performance.now() - u0) / 1000;
    const figures: Figures = {
      parameters: model.parameterCount(),
      load_seconds: loadSeconds,
      tensor_bytes: tensorBytes,
      rss_bytes: process.memoryUsage().rss,
      // The plain step: 'auto' does not recompute a 64-token micro-batch.
      estimate_train_peak_bytes: estimateMemory(config, { sequence: SEQ, batch: SAMPLES / ACCUM, recompute: false })
        .trainPeakBytes,
      generate_tokens_per_s: tokensPerS,
      grpo_update_seconds: updateSeconds,
    };
    update.dispose();
    model.dispose();
    console.log(
      `${label}: ${(figures.parameters / 1e6).toFixed(1)}M parameters · load ${loadSeconds.toFixed(1)} s · tensors ${formatBytes(tensorBytes)} · RSS ${formatBytes(figures.rss_bytes)} · ` +
        `generation ${tokensPerS.toFixed(1)} tok/s · LoRA GRPO update (${SAMPLES} × ${SEQ}) ${updateSeconds.toFixed(1)} s`,
    );
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const load = () => os.loadavg().map((l) => Number(l.toFixed(2)));
const loadBefore = load();
const backend = await initBackend({ forced: 'wasm' });
console.log(`load average before: ${loadBefore.join(' ')} · ${backend.backend} (${backend.reason})`);
const micro = await measure('micro preset (reference)', presetConfig('micro', new ByteTokenizer().vocabSize));
const large = await measure('SmolLM2-135M shapes', fromHfConfig(SMOLLM2_135M));
const scale = large.parameters / micro.parameters;
const ratios = {
  parameters: scale,
  generation_slowdown: micro.generate_tokens_per_s / large.generate_tokens_per_s,
  update_slowdown: large.grpo_update_seconds / micro.grpo_update_seconds,
};
console.log(
  `135M vs micro: ${scale.toFixed(0)}× the parameters, generation ${ratios.generation_slowdown.toFixed(1)}× slower, a LoRA update ${ratios.update_slowdown.toFixed(1)}× slower`,
);
const loadAfter = load();
console.log(
  `load average after: ${loadAfter.join(' ')}${loadAfter[0] > 1 ? ' (loaded: figures taken beside other work)' : ''}`,
);
mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/model-135m.json',
  JSON.stringify(
    {
      benchmark: 'model-135m',
      date: new Date().toISOString(),
      backend: backend.backend,
      gen_tokens: GEN_TOKENS,
      update: { samples: SAMPLES, sequence: SEQ, lora: BENCH_LORA },
      machine: {
        load_average_before: loadBefore,
        load_average_after: loadAfter,
        cores: os.cpus().length,
        node: process.version,
      },
      micro,
      smollm2_135m: large,
      ratios,
    },
    null,
    2,
  ),
);
