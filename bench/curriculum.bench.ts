/**
 * The curriculum benchmark (`npm run bench:curriculum`): one GRPO run from the shipped base that starts
 * at level 1 and moves an environment up a level when its last `--window` training episodes succeed more
 * than 75% of the time (the curriculum's rule, src/train/curriculum.ts), up to `--max-level`. Greedy
 * held-out success at every level up to it, on the same distinct items before and after, each with its
 * interval and the best task-blind and part-blind policies beside it; the training batch's success per update with the
 * level changes marked (bench/results/curriculum.svg).
 *
 *   npm run bench:curriculum                              # func_trace, levels 1–3, 60 updates
 *   npm run bench:curriculum -- --updates 10 --items 16   # a quick look
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { validateRunConfig } from '../src/config/validate.ts';
import { getEnvironment } from '../src/envs/registry.ts';
import { loadHfModel } from '../src/hub/hf.ts';
import { initBackend } from '../src/kernels/backend.ts';
import { resolveModelPath } from '../src/pipeline/platform/node.ts';
import { bestBlindByKind } from '../src/rollout/blind-policies.ts';
import type { RunMarker } from '../src/contracts.ts';
import { EVAL_SEED, heldOut, pct, showRate, trainGrpo } from './lib/learn-run.ts';
import { curriculumChart } from './lib/curriculum-chart.ts';

const { values: args } = parseArgs({
  options: {
    env: { type: 'string', default: 'func_trace' },
    'max-level': { type: 'string', default: '3' },
    window: { type: 'string', default: '32' },
    updates: { type: 'string', default: '60' },
    items: { type: 'string', default: '100' },
    turns: { type: 'string', default: '12' },
    lr: { type: 'string', default: '1e-3' },
    seed: { type: 'string', default: '1' },
    /** curriculum.next_level_share: the share of groups drawn a level above the current one. */
    'next-level-share': { type: 'string', default: '0' },
    /** grpo.loss_normalization. */
    'loss-normalization': { type: 'string', default: 'token' },
    out: { type: 'string', default: 'curriculum' },
  },
});
const ENV = args.env;
const MAX_LEVEL = Number(args['max-level']);
const LEVELS = Array.from({ length: MAX_LEVEL }, (_, i) => i + 1);
const ITEMS = Number(args.items);
const TURNS = Number(args.turns);

const { config, errors } = validateRunConfig({
  name: `bench-curriculum-${ENV}`,
  seed: Number(args.seed),
  model: { base_model: 'spindle-base' },
  lora: { r: 8, alpha: 16 },
  training: {
    max_steps: 1000,
    batch_size: 1,
    group_size: 8,
    learning_rate: Number(args.lr),
    warmup_steps: 3,
    checkpoint_every: 1000,
    eval_interval: 1000,
    eval_at_start: false,
  },
  curriculum: {
    enabled: true,
    start_level: 1,
    window: Number(args.window),
    advance_threshold: 0.75,
    max_level: MAX_LEVEL,
    next_level_share: Number(args['next-level-share']),
  },
  grpo: { loss_normalization: args['loss-normalization'] },
  safety: { enabled: false },
  trajectory_collection: { n_workers: 2, max_steps_per_trajectory: TURNS },
  tasks: { environments: [ENV], difficulty_range: [1, MAX_LEVEL], eval_items: ITEMS },
});
if (!config) throw new Error(JSON.stringify(errors));

const loadBefore = loadavg();
console.log(`load average before: ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`);
const blind: Record<number, { task: number; part: number | null }> = {};
for (const level of LEVELS) {
  const best = await bestBlindByKind(getEnvironment(ENV), level, { items: ITEMS, seed: EVAL_SEED });
  blind[level] = { task: best.task.success, part: best.part?.success ?? null };
}
const blindText = (level: number) =>
  `best task-blind ${pct(blind[level].task)}, part-blind ${blind[level].part === null ? '—' : pct(blind[level].part!)}`;
await initBackend();
const loaded = await loadHfModel(resolveModelPath(process.env.SPINDLE_BENCH_MODEL ?? 'spindle-base'));

const evaluate = async (id: string) => {
  const out: Record<number, Awaited<ReturnType<typeof heldOut>>> = {};
  for (const level of LEVELS) {
    out[level] = await heldOut(loaded, id, ENV, level, ITEMS, { turns: TURNS });
    console.log(`  ${ENV} L${level}: ${showRate(out[level])} of ${out[level].result.n}; ${blindText(level)}`);
  }
  return out;
};
console.log('held-out before:');
const before = await evaluate('spindle-base');

const changes: Extract<RunMarker, { kind: 'curriculum' }>[] = [];
const levelAt: number[] = [];
let level = 1;
const { curve, seconds } = await trainGrpo(loaded, config, {
  maxUpdates: Number(args.updates),
  budgetMs: Infinity,
  onEvent: (event) => {
    if (event.type === 'marker' && event.marker.kind === 'curriculum') {
      changes.push(event.marker);
      level = event.marker.to;
      console.log(`level ${event.marker.from} → ${event.marker.to} at update ${event.marker.step}`);
    }
  },
  onUpdate: ({ step, metrics }) => {
    levelAt.push(level);
    console.log(`update ${step} level ${level} success ${(metrics['rollout/success'] ?? 0).toFixed(2)}`);
  },
});
console.log('held-out after:');
const after = await evaluate('spindle-grpo-curriculum');

const summary = (h: Awaited<ReturnType<typeof heldOut>>) => ({
  success: h.success,
  ci95: h.ci95,
  n: h.result.n,
  agent: h.agent,
});
const levels = LEVELS.map((l) => ({
  level: l,
  before: summary(before[l]),
  after: summary(after[l]),
  blind_best: blind[l],
  separated: after[l].ci95[0] > before[l].ci95[1],
}));
mkdirSync('bench/results', { recursive: true });
writeFileSync(
  `bench/results/${args.out}.json`,
  JSON.stringify(
    {
      benchmark: 'curriculum',
      date: new Date().toISOString(),
      machine: 'Node 20, tfjs-wasm, 2 vCPU',
      load_average_before: loadBefore,
      load_average_end: loadavg(),
      train_seconds: seconds,
      config,
      levels,
      level_changes: changes.map((c) => ({ step: c.step, from: c.from, to: c.to })),
      curve: curve.map((c, i) => ({ step: c.step, level: levelAt[i], success: c.metrics['rollout/success'] ?? 0 })),
    },
    null,
    2,
  ),
);
writeFileSync(
  `bench/results/${args.out}.svg`,
  curriculumChart({
    env: ENV,
    trainSeconds: seconds,
    curve: curve.map((c) => ({ step: c.step, success: c.metrics['rollout/success'] ?? 0 })),
    levels,
    changes,
  }),
);
console.log(`\n| level | before | after | best task-blind, part-blind | intervals |`);
console.log('|---|---|---|---|---|');
for (const l of levels)
  console.log(
    `| ${l.level} | ${showRate(l.before)} | ${showRate(l.after)} | ${blindText(l.level)} | ${l.separated ? 'apart' : 'overlap'} |`,
  );
console.log(`level changes: ${changes.map((c) => `L${c.from} → L${c.to} at update ${c.step}`).join(', ') || 'none'}`);
process.exit(0);
