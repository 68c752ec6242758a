/**
 * `npm run bench`: every benchmark in its own process (a clean tfjs/wasm state each), one after
 * another. Each prints ratios against a reference measured in the same run and writes
 * bench/results/<name>.json. The learning benchmark is separate (`npm run bench:learn`, 15 minutes), and so
 * is WebGPU's (`npx tsx bench/webgpu.bench.ts`, for a machine with a GPU).
 */
import { spawnSync } from 'node:child_process';

const BENCHES = [
  'bench/model.bench.ts',
  'bench/model-135m.bench.ts',
  'bench/memory.bench.ts',
  'bench/pipeline.bench.ts',
  'bench/rollout-kv.bench.ts',
  'bench/sandbox.bench.ts',
];
let failed = 0;
for (const file of BENCHES) {
  console.log(`\n=== ${file}`);
  const result = spawnSync(process.execPath, ['--import', 'tsx', file, ...process.argv.slice(2)], { stdio: 'inherit' });
  if (result.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
