/**
 * The learning benchmark (`npm run bench:learn`): GRPO from the shipped base model on arith_tool and
 * letter_count for a fixed wall-clock budget on the wasm backend, with held-out success measured
 * before and after by the same greedy evaluation. Writes bench/results/learn.json and learn.svg
 * (reward and held-out success over steps).
 *
 *   npm run bench:learn                       # 15-minute budget
 *   npm run bench:learn -- --minutes 3        # a quick look
 */
import 'fake-indexeddb/auto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { validateRunConfig } from '../src/config/validate.ts';
import { getEnvironment } from '../src/envs/registry.ts';
import { loadHfModel } from '../src/model/hf.ts';
import { initBackend } from '../src/model/backend.ts';
import { createNodeRun, resolveModelPath } from '../src/pipeline/node.ts';
import { EnginePolicy, GenerationService } from '../src/pipeline/generation.ts';
import { evaluatePolicy, formatEvalTable, type EvalResult } from '../src/rollout/evaluate.ts';
import { openStore } from '../src/store/index.ts';
import type { RunEvent } from '../src/pipeline/events.ts';
import type { Policy } from '../src/rollout/policy.ts';
import { lineChartSvg } from './lib/svg-chart.ts';

const { values: args } = parseArgs({ options: { minutes: { type: 'string', default: '15' }, 'eval-items': { type: 'string', default: '48' } } });
const BUDGET_MS = Number(args.minutes) * 60_000;
const ENVS = ['arith_tool', 'letter_count'];
const EVAL_ITEMS = Number(args['eval-items']);

const { config, errors } = validateRunConfig({
  name: 'bench-learn',
  seed: 11,
  model: { base_model: 'spindle-base' },
  lora: { r: 8, alpha: 16 },
  // Micro-batches of 4 sequences keep attention activations well inside the wasm heap.
  training: { max_steps: 1000, batch_size: 2, group_size: 8, grad_accum_steps: 4, learning_rate: 2e-3, warmup_steps: 3, checkpoint_every: 1000, eval_interval: 1000 },
  grpo: { advantage: 'zscore', zero_std_groups: 'skip' },
  sampling: { temperature: 1, max_new_tokens: 96 },
  safety: { enabled: false },
  curriculum: { enabled: false },
  trajectory_collection: { n_workers: 2, max_steps_per_trajectory: 3 },
  tasks: { environments: ENVS, difficulty_range: [1, 1], eval_items: EVAL_ITEMS },
});
if (!config) throw new Error(JSON.stringify(errors));

async function heldOut(label: string, policy: Policy): Promise<EvalResult[]> {
  const results = await evaluatePolicy(policy, ENVS.map(getEnvironment), { items: EVAL_ITEMS, seed: 2024, levels: [1], concurrency: 16, maxSteps: 3 });
  console.log(`${label}\n${formatEvalTable(results)}`);
  return results;
}

await initBackend();
const base = await loadHfModel(resolveModelPath(process.env.SPINDLE_BENCH_MODEL ?? 'spindle-base'));
const basePolicy = new EnginePolicy('spindle-base', base.tokenizer, new GenerationService(() => base.model, base.tokenizer));
const before = await heldOut('held-out success before GRPO:', basePolicy);

const store = await openStore({ factory: new IDBFactory() });
const run = createNodeRun({ store, cores: 2, loadModel: async () => ({ model: base.model, tokenizer: base.tokenizer }) });
const curve: { step: number; reward: number; seconds: number }[] = [];
const started = performance.now();
run.subscribe((event: RunEvent) => {
  if (event.type === 'update') {
    const seconds = (performance.now() - started) / 1000;
    curve.push({ step: event.step, reward: event.metrics.reward ?? 0, seconds });
    console.log(`step ${event.step} reward ${(event.metrics.reward ?? 0).toFixed(3)} zero_std ${(event.metrics.frac_reward_zero_std ?? 0).toFixed(2)} loss ${(event.metrics['train/loss'] ?? 0).toFixed(4)} (${seconds.toFixed(0)} s)`);
    if (seconds * 1000 > BUDGET_MS) void run.stop();
  }
  if (event.type === 'error') console.log(`${event.fatal ? 'FATAL' : 'warning'}: ${event.message}`);
});
await run.start(config);
await run.done();
const trainSeconds = (performance.now() - started) / 1000;

// The run trained LoRA adapters on the loaded model in place: evaluate the same object again.
const after = await heldOut('held-out success after GRPO:', new EnginePolicy('spindle-grpo', base.tokenizer, new GenerationService(() => base.model, base.tokenizer)));

const summary = ENVS.map((env) => {
  const b = before.find((r) => r.env === env)!;
  const a = after.find((r) => r.env === env)!;
  return { env, before: b.success, after: a.success, points: 100 * (a.success - b.success) };
});
const result = {
  benchmark: 'learn', date: new Date().toISOString(), machine: 'Node 20, tfjs-wasm, 2 vCPU (shared)', budget_minutes: Number(args.minutes),
  train_seconds: trainSeconds, steps: curve.length, config, eval_items: EVAL_ITEMS, summary, before, after, curve,
};
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/learn.json', JSON.stringify(result, null, 2));
writeFileSync('bench/results/learn.svg', lineChartSvg({
  title: `GRPO from spindle-base (${curve.length} steps, ${(trainSeconds / 60).toFixed(1)} min)`,
  xLabel: 'update step',
  series: [
    { name: 'reward (train batch)', points: curve.map((c) => [c.step, c.reward]) },
    ...summary.map((s) => ({ name: `${s.env} held-out success`, points: [[0, s.before], [curve.length, s.after]] as [number, number][] })),
  ],
}));
for (const s of summary) console.log(`${s.env}: held-out success ${(100 * s.before).toFixed(1)}% → ${(100 * s.after).toFixed(1)}% (${s.points >= 0 ? '+' : ''}${s.points.toFixed(1)} points)`);
store.db.close();
process.exit(0);
