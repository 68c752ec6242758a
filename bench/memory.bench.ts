/**
 * Memory benchmark (`npx tsx bench/memory.bench.ts`): estimateMemory's training peak against what one
 * LoRA GRPO update really takes on tfjs-wasm, the growth of its heap (which only grows, so each shape
 * runs in a fresh process). Shapes: the micro preset at 64 and 256 tokens and 4 × 128, and three layers
 * of SmolLM2-135M (its 49,152-token vocabulary and 576-wide head) at 64 and 256 tokens, which memory.ts's
 * coefficients were fitted on; then two shapes held out from the fit, the nano preset and the whole
 * 30-layer SmolLM2-135M. Prints the ratio measured / estimated per shape; writes bench/results/memory.json.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../src/model/backend.ts';
import { fromHfConfig, presetConfig, type ModelConfig } from '../src/model/config.ts';
import { estimateMemory, formatBytes } from '../src/model/memory.ts';
import { TransformerModel } from '../src/model/transformer.ts';
import { loraUpdate } from './lib/lora-update.ts';
import { SMOLLM2_135M } from './lib/smollm2.ts';

const SMOLLM2_3_LAYERS = fromHfConfig({ ...SMOLLM2_135M, num_hidden_layers: 3 });
const SHAPES: { name: string; config: ModelConfig; seq: number; batch: number }[] = [
  { name: 'micro 1 × 64', config: presetConfig('micro', 266), seq: 64, batch: 1 },
  { name: 'micro 1 × 256', config: presetConfig('micro', 266), seq: 256, batch: 1 },
  { name: 'micro 4 × 128', config: presetConfig('micro', 266), seq: 128, batch: 4 },
  { name: 'smollm2-135m, 3 layers, 1 × 64', config: SMOLLM2_3_LAYERS, seq: 64, batch: 1 },
  { name: 'smollm2-135m, 3 layers, 1 × 256', config: SMOLLM2_3_LAYERS, seq: 256, batch: 1 },
  // Held out: the coefficients were fitted on the shapes above.
  { name: 'held out: nano 2 × 96', config: presetConfig('nano', 266), seq: 96, batch: 2 },
  { name: 'held out: smollm2-135m (30 layers), 1 × 64', config: fromHfConfig(SMOLLM2_135M), seq: 64, batch: 1 },
];

interface Row {
  shape: string;
  measured_bytes: number;
  estimated_bytes: number;
  ratio: number;
}

/** In the child: the heap growth of one update on shape `index`, printed as JSON. */
async function measureOne(index: number): Promise<void> {
  const { config, seq, batch } = SHAPES[index];
  await initBackend({ forced: 'wasm' });
  const heap = () => (tf.backend() as unknown as { wasm: { HEAPU8: Uint8Array } }).wasm.HEAPU8.length;
  const model = TransformerModel.create(config, 1);
  const update = loraUpdate(model, batch, seq, 1);
  const before = heap();
  const weights = tf.memory().numBytes;
  await update.run();
  // The peak is the heap it grew to, counting the weights it held before.
  console.log(JSON.stringify({ measured: heap() - before + weights }));
}

if (process.argv[2] !== undefined) {
  await measureOne(Number(process.argv[2]));
} else {
  const load = () => os.loadavg().map((l) => Number(l.toFixed(2)));
  const loadBefore = load();
  console.log(`load average before: ${loadBefore.join(' ')} (${os.cpus().length} cores)`);
  const rows: Row[] = [];
  for (const [i, shape] of SHAPES.entries()) {
    const child = spawnSync(process.execPath, [...process.execArgv, process.argv[1], String(i)], { encoding: 'utf8' });
    const line = child.stdout.trim().split('\n').pop() ?? '';
    if (child.status !== 0 || !line.startsWith('{')) throw new Error(`${shape.name}: the measuring process failed: ${child.stderr.trim().split('\n').pop()}`);
    const measured = (JSON.parse(line) as { measured: number }).measured;
    const estimated = estimateMemory(shape.config, { sequence: shape.seq, batch: shape.batch }).trainPeakBytes;
    rows.push({ shape: shape.name, measured_bytes: measured, estimated_bytes: estimated, ratio: Number((measured / estimated).toFixed(2)) });
    console.log(`${shape.name.padEnd(44)} measured ${formatBytes(measured).padStart(9)} · estimated ${formatBytes(estimated).padStart(9)} · measured/estimated ${(measured / estimated).toFixed(2)}`);
  }
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/memory.json', JSON.stringify({ benchmark: 'memory', date: new Date().toISOString(), backend: 'wasm', machine: { load_average_before: loadBefore, load_average_after: load(), node: process.version }, rows }, null, 2) + '\n');
  console.log('wrote bench/results/memory.json');
}
