/**
 * Memory benchmark (`npx tsx bench/memory.bench.ts [--only=<text>]`): estimateMemory's training peak
 * against what one LoRA GRPO update really takes on tfjs-wasm, the growth of its heap (which only grows,
 * so each shape runs in a fresh process). Random weights built here; nothing is downloaded.
 *
 * Shapes, each plain (every activation kept) or with its blocks recomputed in the backward pass
 * (src/model/recompute.ts), the base in float32 or int8 (src/model/int8.ts):
 * - fitted: the micro preset at 64 and 256 tokens and 4 × 128, three layers of SmolLM2-135M (its
 *   49,152-token vocabulary and 576-wide head) at 64 and 256 tokens, plain and recomputed;
 * - held out from the fit: the nano preset, the whole 30-layer SmolLM2-135M at 64 tokens;
 * - the memory targets within wasm's 4 GiB: SmolLM2-135M at 512 tokens and a Qwen2.5-0.5B shape at
 *   256 tokens, recomputed (float32 and int8), measured where they fit; the plain steps are estimated only
 *   (past the heap, tfjs-wasm corrupts memory instead of failing), and so is the float32 0.5B one (below).
 * Then the step-time cost of recomputation: the micro preset's 4 × 128-token update, plain against recomputed.
 * Prints measured / estimated per shape; a full run (no --only) writes bench/results/memory.json with the load average.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../src/kernels/backend.ts';
import { fromHfConfig, presetConfig, type ModelConfig } from '../src/model/config.ts';
import { estimateMemory, formatBytes, type BaseQuantization } from '../src/model/memory.ts';
import { TransformerModel } from '../src/model/transformer.ts';
import { loraUpdate } from './lib/lora-update.ts';
import { QWEN25_05B } from './lib/qwen25.ts';
import { SMOLLM2_135M } from './lib/smollm2.ts';

const HEAP = 4 * 1024 ** 3;
const SMOLLM2 = fromHfConfig(SMOLLM2_135M);
const SMOLLM2_3_LAYERS = fromHfConfig({ ...SMOLLM2_135M, num_hidden_layers: 3 });
const QWEN = fromHfConfig(QWEN25_05B);
const MICRO = presetConfig('micro', 266);

interface Shape {
  name: string;
  config: ModelConfig;
  seq: number;
  batch: number;
  recompute: boolean;
  quantization: BaseQuantization;
  /** False: estimated only (the step would not fit, or would take too long here). */
  measure: boolean;
}

const shape = (
  name: string,
  config: ModelConfig,
  seq: number,
  batch: number,
  recompute: boolean,
  quantization: BaseQuantization = 'none',
  measure = true,
): Shape => ({ name, config, seq, batch, recompute, quantization, measure });

const SHAPES: Shape[] = [
  shape('micro 1 × 64', MICRO, 64, 1, false),
  shape('micro 1 × 256', MICRO, 256, 1, false),
  shape('micro 4 × 128', MICRO, 128, 4, false),
  shape('micro 1 × 256, recomputed', MICRO, 256, 1, true),
  shape('smollm2-135m, 3 layers, 1 × 64', SMOLLM2_3_LAYERS, 64, 1, false),
  shape('smollm2-135m, 3 layers, 1 × 256', SMOLLM2_3_LAYERS, 256, 1, false),
  shape('smollm2-135m, 3 layers, 1 × 256, recomputed', SMOLLM2_3_LAYERS, 256, 1, true),
  // Held out: the coefficients were fitted on the shapes above.
  shape('held out: nano 2 × 96', presetConfig('nano', 266), 96, 2, false),
  shape('held out: smollm2-135m (30 layers), 1 × 64', SMOLLM2, 64, 1, false),
  // Issue 30's targets.
  shape('smollm2-135m 1 × 512, plain', SMOLLM2, 512, 1, false, 'none', false),
  shape('smollm2-135m 1 × 512, recomputed', SMOLLM2, 512, 1, true),
  shape('smollm2-135m 1 × 512, recomputed, int8', SMOLLM2, 512, 1, true, 'int8'),
  shape('qwen2.5-0.5b 1 × 256, plain', QWEN, 256, 1, false, 'none', false),
  // Estimated only: in float32 the update's fit check (src/train/update-fit.ts) adds generation's packed float32
  // copies of the projections and head (1.8 GiB), which a run holds once it has generated, and refuses it.
  shape('qwen2.5-0.5b 1 × 256, recomputed', QWEN, 256, 1, true, 'none', false),
  shape('qwen2.5-0.5b 1 × 256, recomputed, int8', QWEN, 256, 1, true, 'int8'),
];

interface Row {
  shape: string;
  estimated_bytes: number;
  fits_4gib_estimated: boolean;
  measured_bytes: number | null;
  fits_4gib_measured: boolean | null;
  ratio: number | null;
  update_seconds: number | null;
}

const heap = () => (tf.backend() as unknown as { wasm: { HEAPU8: Uint8Array } }).wasm.HEAPU8.length;

/** In the child: the heap growth of one update on shape `index`, printed as JSON. */
async function measureOne(index: number): Promise<void> {
  const { config, seq, batch, recompute, quantization } = SHAPES[index];
  await initBackend({ forced: 'wasm' });
  const model = TransformerModel.create(config, 1, quantization);
  model.recompute = recompute ? 'on' : 'off';
  const update = loraUpdate(model, batch, seq, 1);
  const before = heap();
  const weights = tf.memory().numBytes;
  const start = performance.now();
  await update.run();
  // The peak is the heap it grew to, counting the weights it held before.
  console.log(JSON.stringify({ measured: heap() - before + weights, seconds: (performance.now() - start) / 1000 }));
}

/** In the child: the micro preset's 4 × 128 update, plain and recomputed in turn; median seconds of each. */
async function timeRecompute(): Promise<void> {
  await initBackend({ forced: 'wasm' });
  const model = TransformerModel.create(MICRO, 1);
  const update = loraUpdate(model, 4, 128, 1);
  const times: Record<'off' | 'on', number[]> = { off: [], on: [] };
  for (let round = 0; round < 6; round++) {
    for (const mode of ['off', 'on'] as const) {
      model.recompute = mode;
      const start = performance.now();
      await update.run();
      if (round > 0) times[mode].push((performance.now() - start) / 1000); // round 0 warms up
    }
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(JSON.stringify({ plain: median(times.off), recomputed: median(times.on) }));
}

function child(arg: string): Record<string, number> {
  const run = spawnSync(process.execPath, [...process.execArgv, process.argv[1], arg], {
    encoding: 'utf8',
    maxBuffer: 1 << 24,
  });
  const line = run.stdout.trim().split('\n').pop() ?? '';
  if (run.status !== 0 || !line.startsWith('{'))
    throw new Error(`${arg}: the measuring process failed: ${run.stderr.trim().split('\n').pop()}`);
  return JSON.parse(line) as Record<string, number>;
}

const arg = process.argv[2];
if (arg === 'time') {
  await timeRecompute();
} else if (arg !== undefined && !arg.startsWith('--')) {
  await measureOne(Number(arg));
} else {
  const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
  const load = () => os.loadavg().map((l) => Number(l.toFixed(2)));
  const loadBefore = load();
  console.log(`load average before: ${loadBefore.join(' ')} (${os.cpus().length} cores)`);
  const rows: Row[] = [];
  for (const [i, s] of SHAPES.entries()) {
    if (only && !s.name.includes(only)) continue;
    const estimated = estimateMemory(s.config, {
      sequence: s.seq,
      batch: s.batch,
      recompute: s.recompute,
      quantization: s.quantization,
    }).trainPeakBytes;
    const got = s.measure ? child(String(i)) : null;
    const measured = got?.measured ?? null;
    rows.push({
      shape: s.name,
      estimated_bytes: estimated,
      fits_4gib_estimated: estimated <= HEAP,
      measured_bytes: measured,
      fits_4gib_measured: measured === null ? null : measured <= HEAP,
      ratio: measured === null ? null : Number((measured / estimated).toFixed(2)),
      update_seconds: got ? Number(got.seconds.toFixed(1)) : null,
    });
    const m = measured === null ? 'not run'.padStart(18) : `measured ${formatBytes(measured).padStart(9)}`;
    console.log(
      `${s.name.padEnd(46)} ${m} · estimated ${formatBytes(estimated).padStart(9)}${measured === null ? '' : ` · measured/estimated ${(measured / estimated).toFixed(2)} · ${got!.seconds.toFixed(1)} s`} · ${(measured ?? estimated) <= HEAP ? 'fits' : 'does not fit'} 4 GiB`,
    );
  }
  let recomputeCost: { plain_seconds: number; recomputed_seconds: number; ratio: number } | null = null;
  if (!only || 'time'.includes(only)) {
    const t = child('time');
    recomputeCost = {
      plain_seconds: Number(t.plain.toFixed(3)),
      recomputed_seconds: Number(t.recomputed.toFixed(3)),
      ratio: Number((t.recomputed / t.plain).toFixed(2)),
    };
    console.log(
      `step time, micro 4 × 128: plain ${t.plain.toFixed(3)} s · recomputed ${t.recomputed.toFixed(3)} s · ×${(t.recomputed / t.plain).toFixed(2)}`,
    );
  }
  const loadAfter = load();
  console.log(`load average after: ${loadAfter.join(' ')}`);
  if (only) process.exit(0); // a partial run prints; only a full run writes the results file
  mkdirSync('bench/results', { recursive: true });
  const result = {
    benchmark: 'memory',
    date: new Date().toISOString(),
    backend: 'wasm',
    machine: {
      load_average_before: loadBefore,
      load_average_after: loadAfter,
      cores: os.cpus().length,
      node: process.version,
    },
    rows,
    recompute_step_time_micro_4x128: recomputeCost,
  };
  writeFileSync('bench/results/memory.json', JSON.stringify(result, null, 2) + '\n');
  console.log('wrote bench/results/memory.json');
}
