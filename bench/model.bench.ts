/**
 * Model benchmark (`npx tsx bench/model.bench.ts`), one run, two ratios:
 * 1. a full fine-tuning step (forward + backward + Adam) of the micro preset on tfjs-wasm in Node (one
 *    thread) against PyTorch CPU on the same shapes and the same architecture (when /usr/bin/python3
 *    has torch; otherwise that half is reported as skipped), with tf.profile's top kernels of one step.
 *    Target: wasm within 2× of torch pinned to one thread, torch and its BLAS alike. PyTorch as
 *    installed (its BLAS on every core) is measured beside it and reported, not targeted.
 * 2. KV-cached generation tokens/s at batch 1, 4 and 16 against PyTorch's KV-cached decoding of the
 *    same model (each the median of GEN_ROUNDS rounds), and at batch 1 against recomputing the prefix every step.
 * 3. Issue #18's starting commit measured in this run (lib/at-commit.ts): batch-1 generation (target
 *    ≥ 3×) and a tf.train.adam step, the same script in both trees, alternately.
 * Spindle's figures are taken with its kernels on 1, 2 and every core's thread (wasm-simd/kernel-threads.ts),
 * alternately in the same rounds; the targets: the train step ≤ 1.0× PyTorch as installed, and
 * batch-16 generation ≥ 1.6× its one-thread figure on 2 cores.
 * Writes bench/results/model.json with the machine it ran on.
 */
import * as tf from '@tensorflow/tfjs';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { initBackend } from '../src/kernels/backend.ts';
import { ByteTokenizer } from '../src/tokenizer/byte-tokenizer.ts';
import { presetConfig, type ModelConfig } from '../src/model/config.ts';
import { crossEntropyLoss } from '../src/model/logprobs.ts';
import { generate } from '../src/model/sampling.ts';
import { TransformerModel } from '../src/model/transformer.ts';
import { setKernelThreads } from '../src/kernels/wasm-simd/heap-kernels.ts';
import { Optimizer } from '../src/train/optimizer.ts';
import { runAtCommits } from './lib/at-commit.ts';
import { runTorch, type TorchRun } from './lib/torch-reference.ts';

const BATCH = Number(process.env.BENCH_BATCH ?? 8);
const SEQ = Number(process.env.BENCH_SEQ ?? 64);
const STEPS = Number(process.env.BENCH_STEPS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const GEN_TOKENS = Number(process.env.BENCH_GEN ?? 256);
/** The target: the train step within 2× of PyTorch CPU (median to median). */
const TRAIN_TARGET = 2;
/** The baseline commit: the batch-1 generation target (≥ 3×) is against it, run beside the current tree. */
const START_COMMIT = '3c9594f';
/** Tokens generated before any timed generation. */
const WARM_UP_TOKENS = 32;
/** Tokens per row of each batched warm-up run (generation's): V8 optimises the recorded step's JS after a hundred steps or so. */
const BATCHED_WARM_UP_TOKENS = 128;
/** Rounds of the start-commit comparison (each a fresh process per tree). */
const AT_COMMIT_ROUNDS = 5;
const GEN_TARGET = 3;

/**
 * The script both trees run for the start-commit comparison: their APIs for this are the same, but the backend and
 * the byte tokenizer moved out of src/model (to src/kernels and src/tokenizer), so each is imported from where the tree has it.
 */
const AT_COMMIT_SCRIPT = `
import * as tf from '@tensorflow/tfjs';
import { existsSync } from 'node:fs';
import { presetConfig } from './src/model/config.ts';
import { crossEntropyLoss } from './src/model/logprobs.ts';
import { generate } from './src/model/sampling.ts';
import { TransformerModel } from './src/model/transformer.ts';
const moved = (now: string, then: string) => (existsSync(now) ? now : then);
const { initBackend } = await import(moved('./src/kernels/backend.ts', './src/model/backend.ts'));
const { ByteTokenizer } = await import(moved('./src/tokenizer/byte-tokenizer.ts', './src/model/byte-tokenizer.ts'));
await initBackend({ forced: 'wasm' });
const config = presetConfig('micro', new ByteTokenizer().vocabSize);
const gen = TransformerModel.create(config, 2);
// Warm-up long enough for V8 to optimise the decoding loop in either tree (GRPO generates thousands of tokens).
await generate(gen, [[1, 2]], { maxNewTokens: ${WARM_UP_TOKENS}, temperature: 0, seed: 1 });
const start = performance.now();
const out = await generate(gen, [[256, 10, 20, 30]], { maxNewTokens: ${GEN_TOKENS}, temperature: 0, seed: 1, useCache: true });
const tokensPerS = out.tokens[0].length / ((performance.now() - start) / 1000);
const model = TransformerModel.create(config, 1);
const optimizer = tf.train.adam(3e-4);
const tokens = Array.from({ length: ${BATCH} }, (_, b) => Array.from({ length: ${SEQ} }, (_, t) => (b * 31 + t * 7) % 256));
const times = [];
for (let i = 0; i <= ${STEPS}; i++) {
  const s = performance.now();
  const loss = optimizer.minimize(() => crossEntropyLoss(model, tokens), true, model.trainableVariables());
  await loss.data();
  loss.dispose();
  if (i > 0) times.push(performance.now() - s);
}
times.sort((a, b) => a - b);
console.log(JSON.stringify({ tokensPerS, stepMs: times[Math.floor(times.length / 2)] }));
`;

interface AtCommitFigures {
  tokensPerS: number;
  stepMs: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

interface Timing {
  medianMs: number;
  minMs: number;
}

function summarize(times: number[]): Timing {
  return { medianMs: median(times), minMs: Math.min(...times) };
}

interface OpRow {
  kernel: string;
  ms: number;
  calls: number;
}

/** Kernel time per kernel name, largest first (tf.profile times each kernel; nested scopes are left out). */
function topOps(info: { kernels: { name: string; kernelTimeMs: unknown }[] }, rows = 10): OpRow[] {
  const byName = new Map<string, OpRow>();
  for (const k of info.kernels) {
    if (k.name === 'forward' || k.name === 'unnamed scope') continue; // a custom gradient's scope: its kernels are counted themselves
    const row = byName.get(k.name) ?? { kernel: k.name, ms: 0, calls: 0 };
    row.ms += typeof k.kernelTimeMs === 'number' ? k.kernelTimeMs : 0;
    row.calls++;
    byName.set(k.name, row);
  }
  return [...byName.values()].sort((a, b) => b.ms - a.ms).slice(0, rows);
}

/**
 * Full fine-tuning steps on one model with Spindle's own optimizer (src/train/optimizer.ts, as the
 * trainer runs it: gradients, accumulate, then its step, which also measures the gradient norm; no
 * clipping or decay, like the PyTorch reference's plain Adam). The first (kernel set-up) step is not timed.
 */
function tfjsTrainer(config: ModelConfig): {
  run: (steps: number) => Promise<number[]>;
  profile: () => Promise<OpRow[]>;
  dispose: () => void;
} {
  const model = TransformerModel.create(config, 1);
  const optimizer = new Optimizer(model.trainableVariables(), {
    kind: 'adam',
    learningRate: 3e-4,
    warmupSteps: 0,
    weightDecay: 0,
    gradClip: 0,
  });
  const tokens = Array.from({ length: BATCH }, (_, b) => Array.from({ length: SEQ }, (_, t) => (b * 31 + t * 7) % 256));
  const step = async () => {
    const start = performance.now();
    const { value, grads } = tf.variableGrads(() => crossEntropyLoss(model, tokens), optimizer.variables);
    await value.data();
    optimizer.accumulate(optimizer.variables.map((v) => grads[v.name]));
    tf.dispose([value, ...Object.values(grads)]);
    await optimizer.step();
    return performance.now() - start;
  };
  let warm = false;
  return {
    async run(steps) {
      if (!warm) await step();
      warm = true;
      const times: number[] = [];
      for (let i = 0; i < steps; i++) times.push(await step());
      return times;
    },
    profile: async () => topOps(await tf.profile(step)),
    dispose() {
      optimizer.dispose();
      model.dispose();
    },
  };
}

/** One PyTorch configuration's step times over the rounds, and its report beside tfjs's. */
class TorchTimes {
  private readonly times: number[] = [];
  private info: Omit<TorchRun, 'times'> | null = null;
  private skipped = 'not run';

  add(run: TorchRun | { skipped: string }): void {
    if ('skipped' in run) {
      this.skipped = run.skipped;
      return;
    }
    const { times, ...info } = run;
    this.times.push(...times);
    this.info = info;
  }

  report(
    label: string,
    tfjs: Timing,
  ): (Timing & Omit<TorchRun, 'times'> & { ratio: { median: number; best: number } }) | { skipped: string } {
    if (!this.info) {
      console.log(`PyTorch (${label}) skipped: ${this.skipped}`);
      return { skipped: this.skipped };
    }
    const timing = summarize(this.times);
    const ratio = { median: tfjs.medianMs / timing.medianMs, best: tfjs.minMs / timing.minMs };
    const i = this.info;
    console.log(
      `PyTorch ${i.torch} CPU ${label} (torch ${i.threads} thread(s), OpenBLAS ${i.blas_threads ?? '?'}; ${i.blas}): median ${timing.medianMs.toFixed(0)} ms, best ${timing.minMs.toFixed(0)} ms; tfjs-wasm / it: ${ratio.median.toFixed(2)}× median, ${ratio.best.toFixed(2)}× best`,
    );
    return { ...timing, ...i, ratio };
  }
}

const torchStep = (config: ModelConfig, threads: 1 | 'as-installed') =>
  runTorch<TorchRun>(config, { batch: BATCH, seq: SEQ, steps: STEPS, threads });

/** PyTorch's KV-cached greedy decoding at batch B, the same architecture: the reference for tokens/s. */
const torchGeneration = (config: ModelConfig, batch: number) =>
  runTorch<{ tokens_per_s: number }>(config, { batch, seq: 0, steps: GEN_TOKENS, generate: true });

/** Rounds of the generation figures (each configuration's median is reported). */
const GEN_ROUNDS = Number(process.env.BENCH_GEN_ROUNDS ?? 3);
/** Rows per batch for the batched-generation figures (the engine samples a GRPO group's rows together). */
const GEN_BATCHES = [1, 4, 16];
/** Kernel thread counts measured: 1, 2 and every core (initBackend's default). */
const THREADS = [...new Set([1, 2, os.availableParallelism()])];

interface GenerationFigures {
  /** Batch 1, without the cache (every step recomputes the prefix): the cache's reference. */
  recomputeTokensPerS: number;
  identical: boolean;
  /** Tokens/s summed over the rows, per batch size and kernel thread count, KV cache on. */
  batched: { batch: number; threads: number; tokensPerS: number }[];
  /** tf.profile of one batch-1 decoding step at 128 cached positions: its kernels (3c9594f ran about 170). */
  decodeStepProfile: OpRow[];
}

/** The kernels of one batch-1 decoding step with 128 positions cached. */
async function decodeStepProfile(model: TransformerModel): Promise<OpRow[]> {
  const prompt = Array.from({ length: 128 }, (_, t) => (t * 7) % 256);
  const prefix = model.forward([prompt], { cache: model.emptyCache(), lastOnly: true });
  const info = await tf.profile(() => model.forward([[5]], { cache: prefix.cache, lastOnly: true }).logits);
  for (const t of [prefix.logits, ...prefix.cache!.k, ...prefix.cache!.v]) t.dispose();
  return topOps(info);
}

async function generation(config: ModelConfig): Promise<GenerationFigures> {
  const model = TransformerModel.create(config, 2);
  const run = async (batch: number, useCache: boolean) => {
    const start = performance.now();
    const out = await generate(
      model,
      Array.from({ length: batch }, () => [256, 10, 20, 30]),
      { maxNewTokens: GEN_TOKENS, temperature: 0, seed: 1, useCache },
    );
    return { seconds: (performance.now() - start) / 1000, tokens: out.tokens };
  };
  // Warm up kernels and V8 on every path the timed runs take (a batched step on several threads is recorded as a program: wasm-decode.ts).
  for (const threads of THREADS) {
    setKernelThreads(threads);
    for (const batch of GEN_BATCHES)
      await generate(
        model,
        Array.from({ length: batch }, () => [1, 2]),
        { maxNewTokens: BATCHED_WARM_UP_TOKENS, temperature: 0, seed: 1 },
      );
  }
  // Every configuration GEN_ROUNDS times, the thread counts alternating within a round, so that a busy
  // spell of this shared machine falls on all of them; each figure is its configuration's median.
  const rates = new Map<string, number[]>();
  let first: number[] = [];
  for (let round = 0; round < GEN_ROUNDS; round++) {
    for (const batch of GEN_BATCHES) {
      for (const threads of THREADS) {
        setKernelThreads(threads);
        const r = await run(batch, true);
        if (batch === 1) first = r.tokens[0];
        const key = `${batch}/${threads}`;
        rates.set(key, [...(rates.get(key) ?? []), r.tokens.flat().length / r.seconds]);
      }
    }
  }
  const batched = GEN_BATCHES.flatMap((batch) =>
    THREADS.map((threads) => ({ batch, threads, tokensPerS: median(rates.get(`${batch}/${threads}`)!) })),
  );
  setKernelThreads(THREADS[THREADS.length - 1]);
  const recomputed = await run(1, false);
  const profile = await decodeStepProfile(model);
  model.dispose();
  return {
    recomputeTokensPerS: recomputed.tokens[0].length / recomputed.seconds,
    identical: first.join() === recomputed.tokens[0].join(),
    batched,
    decodeStepProfile: profile,
  };
}

/** Issue #18's starting commit against the current tree in this run: medians of each tree's rounds and their ratios. */
function startCommitComparison() {
  const runs = runAtCommits<AtCommitFigures>(START_COMMIT, AT_COMMIT_SCRIPT, AT_COMMIT_ROUNDS);
  if ('skipped' in runs) {
    console.log(`${START_COMMIT} (the baseline commit) not measured: ${runs.skipped}`);
    return runs;
  }
  const med = (xs: AtCommitFigures[], key: keyof AtCommitFigures) => median(xs.map((x) => x[key]));
  const then = { tokensPerS: med(runs.then, 'tokensPerS'), stepMs: med(runs.then, 'stepMs') };
  const now = { tokensPerS: med(runs.now, 'tokensPerS'), stepMs: med(runs.now, 'stepMs') };
  const ratio = { generation: now.tokensPerS / then.tokensPerS, step: then.stepMs / now.stepMs };
  console.log(
    `against ${START_COMMIT} (the baseline commit), the same script alternately in both trees, ${AT_COMMIT_ROUNDS} rounds (medians):`,
  );
  console.log(
    `  batch-1 generation: ${then.tokensPerS.toFixed(0)} → ${now.tokensPerS.toFixed(0)} tok/s, ${ratio.generation.toFixed(2)}× (target ≥ ${GEN_TARGET}×)`,
  );
  console.log(
    `  train step with tf.train.adam: ${then.stepMs.toFixed(0)} → ${now.stepMs.toFixed(0)} ms, ${ratio.step.toFixed(2)}× faster`,
  );
  return { commit: START_COMMIT, then, now, ratio, target: { generation: GEN_TARGET }, rounds: runs };
}

async function main(): Promise<void> {
  const backend = await initBackend({ forced: 'wasm' });
  const config = presetConfig('micro', new ByteTokenizer().vocabSize);
  const params = TransformerModel.create(config, 0);
  const paramCount = params.parameterCount();
  params.dispose();
  console.log(
    `micro preset: ${(paramCount / 1e6).toFixed(2)}M parameters, batch ${BATCH} × ${SEQ} tokens, ${backend.backend} (${backend.reason})`,
  );

  const loadBefore = os.loadavg().map((l) => Number(l.toFixed(2)));
  console.log(
    `load average before: ${loadBefore.join(' ')}${loadBefore[0] > 0.5 ? ' (the machine is busy: these figures are taken under load)' : ''}`,
  );
  // Alternate tfjs and torch rounds so both see the same load, and report the median and the best
  // step of each; the ratio of the best steps is the least load-sensitive.
  const trainer = tfjsTrainer(config);
  const tfjsTimes = new Map<number, number[]>(THREADS.map((t) => [t, []]));
  const torchRuns = { pinned: new TorchTimes(), asInstalled: new TorchTimes() };
  for (let round = 0; round < ROUNDS; round++) {
    for (const threads of THREADS) {
      setKernelThreads(threads);
      tfjsTimes.get(threads)!.push(...(await trainer.run(STEPS)));
    }
    torchRuns.pinned.add(torchStep(config, 1));
    torchRuns.asInstalled.add(torchStep(config, 'as-installed'));
  }
  const profile = await trainer.profile();
  trainer.dispose();
  const byThreads = THREADS.map((threads) => ({ threads, ...summarize(tfjsTimes.get(threads)!) }));
  for (const t of byThreads)
    console.log(
      `tfjs-wasm train step, kernels on ${t.threads} thread(s): median ${t.medianMs.toFixed(0)} ms, best ${t.minMs.toFixed(0)} ms (${tfjsTimes.get(t.threads)!.length} steps)`,
    );
  const tfjs = byThreads[0];
  const all = byThreads[byThreads.length - 1];
  const torch = torchRuns.pinned.report('pinned to 1 thread', tfjs);
  const torchAsInstalled = torchRuns.asInstalled.report('as installed', tfjs);
  const ratio = 'ratio' in torch ? torch.ratio : null;
  if (ratio)
    console.log(
      `ratio against the 1-thread reference: ${ratio.median.toFixed(2)}× median-to-median (target ≤ ${TRAIN_TARGET}×)`,
    );
  const allCores =
    'medianMs' in torchAsInstalled
      ? { median: all.medianMs / torchAsInstalled.medianMs, best: all.minMs / torchAsInstalled.minMs }
      : null;
  if (allCores)
    console.log(
      `kernels on ${all.threads} threads against PyTorch as installed: ${allCores.median.toFixed(2)}× median-to-median, ${allCores.best.toFixed(2)}× best (target ≤ 1.0×)`,
    );
  console.log('top kernels of one profiled train step (tf.profile):');
  for (const row of profile)
    console.log(
      `  ${row.kernel.padEnd(24)} ${row.ms.toFixed(1).padStart(8)} ms ${String(row.calls).padStart(6)} calls`,
    );

  const gen = await generation(config);
  const batchOne = gen.batched[0].tokensPerS;
  const speedup = batchOne / gen.recomputeTokensPerS;
  const torchGen = gen.batched.map(({ batch }) => ({ batch, result: torchGeneration(config, batch) }));
  console.log(`generation, ${GEN_TOKENS} tokens per row, KV cache (tokens/s over all rows):`);
  for (const { batch, threads, tokensPerS } of gen.batched) {
    const ref = torchGen[GEN_BATCHES.indexOf(batch)].result;
    const single = gen.batched.find((b) => b.batch === batch && b.threads === 1)!.tokensPerS;
    const scaling = threads > 1 ? `, ${(tokensPerS / single).toFixed(2)}× one thread` : '';
    console.log(
      `  batch ${String(batch).padStart(2)}, ${threads} thread(s): ${tokensPerS.toFixed(0).padStart(6)} tok/s${scaling}${'tokens_per_s' in ref ? `, PyTorch ${ref.tokens_per_s.toFixed(0)} tok/s (ratio ${(tokensPerS / ref.tokens_per_s).toFixed(2)})` : ` (PyTorch skipped: ${ref.skipped})`}`,
    );
  }
  console.log('kernels of one batch-1 decoding step, 128 positions cached (tf.profile):');
  for (const row of gen.decodeStepProfile)
    console.log(
      `  ${row.kernel.padEnd(24)} ${row.ms.toFixed(2).padStart(8)} ms ${String(row.calls).padStart(6)} calls`,
    );
  const atStart = startCommitComparison();
  console.log(
    `KV cache / recompute at batch 1: ${speedup.toFixed(2)}× (recompute ${gen.recomputeTokensPerS.toFixed(1)} tok/s); identical tokens: ${gen.identical}`,
  );
  const loadAfter = os.loadavg().map((l) => Number(l.toFixed(2)));
  console.log(`load average after: ${loadAfter.join(' ')}`);

  const result = {
    date: new Date().toISOString(),
    machine: {
      loadAverageBefore: loadBefore,
      loadAverageAfter: loadAfter,
      cpu: os.cpus()[0]?.model ?? 'unknown',
      cores: os.cpus().length,
      platform: `${os.platform()} ${os.release()}`,
      node: process.version,
    },
    model: { preset: 'micro', parameters: paramCount, batch: BATCH, seq: SEQ },
    trainStep: {
      tfjsWasm: tfjs,
      byThreads,
      torch,
      torchAsInstalled,
      ratio,
      allCoresAgainstTorchAsInstalled: allCores,
      target: TRAIN_TARGET,
      profile,
    },
    generation: {
      tokens: GEN_TOKENS,
      recomputeTokensPerS: gen.recomputeTokensPerS,
      identical: gen.identical,
      cacheSpeedup: speedup,
      decodeStepProfile: gen.decodeStepProfile,
      batched: gen.batched.map((b) => ({ ...b, torch: torchGen[GEN_BATCHES.indexOf(b.batch)].result })),
    },
    startCommit: atStart,
  };
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/model.json', JSON.stringify(result, null, 2) + '\n');
  console.log('wrote bench/results/model.json');
}

await main();
