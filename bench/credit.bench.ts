/**
 * The credit ablation (`npm run bench:credit`): GRPO from the shipped base on the multi-step environments
 * with three ways of crediting an episode's turns, each from several seeds, the same updates and the same
 * held-out items:
 *
 * - `trajectory`: every turn gets the trajectory's group advantage (γ = 1, no process rewards);
 * - `turn`: each turn gets the advantage discounted by its distance to the end (γ = --gamma);
 * - `turn+process`: the same plus the process reward that turn earned (a working call, a long thought),
 *   credited to that turn (`process_rewards.apply_to: turn`, train/turn-credit.ts).
 *
 * Prints, per variant: the held-out gain (points of greedy success after − before) per environment as the
 * mean and spread over the seeds, the share of successes that used two or more calls, and the recovery
 * rate after a failed call. Writes bench/results/credit.json.
 *
 *   npm run bench:credit                                  # 3 seeds × 3 variants, 20 updates each
 *   npm run bench:credit -- --seeds 1,2 --updates 10      # a quick look
 */
import * as tf from '@tensorflow/tfjs';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { validateRunConfig } from '../src/config/validate.ts';
import type { RunConfig } from '../src/config/schema.ts';
import { getEnvironment } from '../src/envs/registry.ts';
import { loadHfModel } from '../src/hub/hf.ts';
import { initBackend } from '../src/kernels/backend.ts';
import { resolveModelPath } from '../src/pipeline/platform/node.ts';
import { bestBlindSuccess } from '../src/rollout/blind-policies.ts';
import { mean, sampleStd } from '../src/train/advantages.ts';
import { BENCH_MAX_STEPS, EVAL_SEED, heldOut, pct, showRate, trainGrpo, type HeldOut } from './lib/learn-run.ts';

const { values: args } = parseArgs({
  options: {
    envs: { type: 'string', default: 'file_chain,order_total,func_trace' },
    level: { type: 'string', default: '1' },
    seeds: { type: 'string', default: '1,2,3' },
    updates: { type: 'string', default: '20' },
    items: { type: 'string', default: '100' },
    gamma: { type: 'string', default: '0.9' },
    lr: { type: 'string', default: '5e-4' },
  },
});
const ENVS = args.envs.split(',');
const LEVEL = Number(args.level);
const SEEDS = args.seeds.split(',').map(Number);
const UPDATES = Number(args.updates);
const ITEMS = Number(args.items);
const GAMMA = Number(args.gamma);

const VARIANTS: { name: string; gamma: number; process: RunConfig['process_rewards']['apply_to'] | null }[] = [
  { name: 'trajectory', gamma: 1, process: null },
  { name: 'turn', gamma: GAMMA, process: null },
  { name: 'turn+process', gamma: GAMMA, process: 'turn' },
];

function configFor(variant: (typeof VARIANTS)[number], seed: number): RunConfig {
  const { config, errors } = validateRunConfig({
    name: `bench-credit-${variant.name}-${seed}`,
    seed,
    model: { base_model: 'spindle-base' },
    lora: { r: 8, alpha: 16 },
    training: {
      max_steps: 1000,
      batch_size: ENVS.length,
      group_size: 8,
      grad_accum_steps: 4,
      learning_rate: Number(args.lr),
      warmup_steps: 3,
      checkpoint_every: 1000,
      eval_interval: 1000,
      eval_at_start: false,
    },
    grpo: { advantage: 'zscore', zero_std_groups: 'skip', gamma: variant.gamma },
    process_rewards: { enabled: variant.process !== null, apply_to: variant.process ?? 'score' },
    safety: { enabled: false },
    curriculum: { enabled: false },
    trajectory_collection: { n_workers: 2, max_steps_per_trajectory: BENCH_MAX_STEPS },
    tasks: { environments: ENVS, difficulty_range: [LEVEL, LEVEL], eval_items: ITEMS },
  });
  if (!config) throw new Error(JSON.stringify(errors));
  return config;
}

const modelPath = resolveModelPath(process.env.SPINDLE_BENCH_MODEL ?? 'spindle-base');
const loadBefore = loadavg();
console.log(`load average before: ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`);
const blind = Object.fromEntries(
  await Promise.all(
    ENVS.map(
      async (env) =>
        [env, await bestBlindSuccess(getEnvironment(env), LEVEL, { items: ITEMS, seed: EVAL_SEED })] as const,
    ),
  ),
);
await initBackend();

const summary = (h: HeldOut) => ({ success: h.success, ci95: h.ci95, n: h.result.n, agent: h.agent });
const base = await loadHfModel(modelPath);
const before = Object.fromEntries(
  await Promise.all(
    ENVS.map(async (env) => [env, summary(await heldOut(base, 'spindle-base', env, LEVEL, ITEMS))] as const),
  ),
);
for (const env of ENVS)
  console.log(
    `before ${env} L${LEVEL}: ${showRate(before[env])} of ${before[env].n}, best task-blind ${pct(blind[env].success)}`,
  );
base.model.dispose();

const runs: { variant: string; seed: number; seconds: number; after: Record<string, ReturnType<typeof summary>> }[] =
  [];
for (const seed of SEEDS) {
  for (const variant of VARIANTS) {
    // A fresh copy of the base for every run: a run trains its LoRA in place.
    const loaded = await loadHfModel(modelPath);
    const { seconds } = await trainGrpo(loaded, configFor(variant, seed), { maxUpdates: UPDATES, budgetMs: Infinity });
    const after: Record<string, ReturnType<typeof summary>> = {};
    for (const env of ENVS) after[env] = summary(await heldOut(loaded, `grpo-${variant.name}`, env, LEVEL, ITEMS));
    loaded.model.dispose();
    runs.push({ variant: variant.name, seed, seconds, after });
    console.log(
      `${variant.name} seed ${seed} (${seconds.toFixed(0)} s): ${ENVS.map((env) => `${env} ${pct(before[env].success)} → ${pct(after[env].success)}`).join(', ')}; tensors ${tf.memory().numTensors}`,
    );
  }
}

const table = VARIANTS.map((variant) => {
  const mine = runs.filter((r) => r.variant === variant.name);
  const gains = Object.fromEntries(
    ENVS.map((env) => {
      const points = mine.map((r) => 100 * (r.after[env].success - before[env].success));
      return [env, { mean: mean(points), sd: sampleStd(points), points }];
    }),
  );
  const agents = mine.flatMap((r) => ENVS.map((env) => r.after[env].agent));
  return {
    variant: variant.name,
    gamma: variant.gamma,
    process_rewards: variant.process,
    gains,
    mean_gain: mean(ENVS.map((env) => gains[env].mean)),
    multi_call_success_share: mean(agents.map((a) => a.multi_call_success_share)),
    recovery_rate: mean(agents.map((a) => a.recovery_rate)),
  };
});
const result = {
  benchmark: 'credit',
  date: new Date().toISOString(),
  machine: 'Node 20, tfjs-wasm, 2 vCPU',
  load_average_before: loadBefore,
  load_average_end: loadavg(),
  envs: ENVS,
  level: LEVEL,
  seeds: SEEDS,
  updates: UPDATES,
  items: ITEMS,
  gamma: GAMMA,
  before,
  blind,
  runs,
  table,
};
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/credit.json', JSON.stringify(result, null, 2));
console.log(
  `\n| credit | ${ENVS.map((env) => `${env} L${LEVEL} gain (mean ± sd, points)`).join(' | ')} | mean gain | successes with ≥ 2 calls | recovery after a failed call |`,
);
console.log(`|---|${ENVS.map(() => '---|').join('')}---|---|---|`);
for (const row of table) {
  console.log(
    `| ${row.variant} (γ ${row.gamma}) | ${ENVS.map((env) => `${row.gains[env].mean >= 0 ? '+' : ''}${row.gains[env].mean.toFixed(1)} ± ${row.gains[env].sd.toFixed(1)}`).join(' | ')} | ${row.mean_gain.toFixed(1)} | ${pct(row.multi_call_success_share)} | ${pct(row.recovery_rate)} |`,
  );
}
process.exit(0);
