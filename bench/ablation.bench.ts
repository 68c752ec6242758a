/**
 * A GRPO ablation (`npm run bench:ablation`; `npm run bench:credit` is its credit set): GRPO from the
 * shipped base with each variant of the recipe, from several seeds, the same updates and the same
 * held-out items. Variants (`--variants`, names from VARIANTS below):
 *
 * - `trajectory`: the defaults: every turn gets the episode's group advantage (γ = 1), the loss a mean
 *   over every assistant token of the update;
 * - `turn`: each turn's advantage discounted by its distance to the end (γ = --gamma);
 * - `turn+process`: the same plus the process reward each turn earned, credited to that turn;
 * - `sequence`: the loss a mean over episodes of each episode's token mean (`grpo.loss_normalization`),
 *   so a long episode weighs what a short one does;
 * - `recovery`: a bonus on a retry that worked (`process_rewards.recovery_bonus`, in the ranked score);
 * - `sequence+recovery`: both;
 * - `group16`: groups of 16 instead of 8.
 *
 * Prints, per variant and evaluated set: greedy held-out success before, after (mean ± sd of the seeds,
 * how many seeds' intervals separate from the base's), and how the policy acts: calls per episode, the
 * retry rate and the recovery rate after a failed call. Writes bench/results/<--out>.json.
 *
 *   npm run bench:credit                                       # credit variants on file_chain and order_total L1
 *   npm run bench:ablation -- --seeds 1 --updates 10           # a quick look
 */
import * as tf from '@tensorflow/tfjs';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { validateRunConfig } from '../src/config/validate.ts';
import { getEnvironment } from '../src/envs/registry.ts';
import { loadHfModel } from '../src/hub/hf.ts';
import { initBackend } from '../src/kernels/backend.ts';
import { resolveModelPath } from '../src/pipeline/platform/node.ts';
import { bestBlindByKind } from '../src/rollout/blind-policies.ts';
import { mean, sampleStd } from '../src/train/advantages.ts';
import type { RunConfig } from '../src/config/schema.ts';
import type { Trajectory } from '../src/contracts.ts';
import { postFailureMass, type PostFailureMass } from './lib/retry-mass.ts';
import { EVAL_SEED, heldOut, pct, showRate, trainGrpo, type HeldOut } from './lib/learn-run.ts';

const { values: args } = parseArgs({
  options: {
    variants: { type: 'string', default: 'trajectory,sequence,recovery' },
    envs: { type: 'string', default: 'func_trace' },
    /** The training level of every environment, or `env=level,…`. */
    levels: { type: 'string', default: '2' },
    /** Sets evaluated before and after, `env=level,…`; by default the training ones. */
    eval: { type: 'string', default: '' },
    seeds: { type: 'string', default: '1,2,3' },
    updates: { type: 'string', default: '30' },
    /** Groups of each environment in an update. */
    groups: { type: 'string', default: '1' },
    items: { type: 'string', default: '100' },
    turns: { type: 'string', default: '12' },
    gamma: { type: 'string', default: '0.9' },
    lr: { type: 'string', default: '1e-3' },
    out: { type: 'string', default: 'ablation' },
  },
});
const ENVS = args.envs.split(',');
const levelOf = (spec: string, env: string): number => {
  const parts = spec.split(',').map((p) => p.split('='));
  const found = parts.find(([name]) => name === env);
  return Number(found ? found[1] : parts.length === 1 && parts[0].length === 1 ? parts[0][0] : 1);
};
const LEVELS = Object.fromEntries(ENVS.map((env) => [env, levelOf(args.levels, env)]));
const EVAL_SETS: { env: string; level: number }[] = args.eval
  ? args.eval.split(',').map((p) => ({ env: p.split('=')[0], level: Number(p.split('=')[1]) }))
  : ENVS.map((env) => ({ env, level: LEVELS[env] }));
const SEEDS = args.seeds.split(',').map(Number);
const UPDATES = Number(args.updates);
const ITEMS = Number(args.items);
const TURNS = Number(args.turns);
const GAMMA = Number(args.gamma);

type Normalization = RunConfig['grpo']['loss_normalization'];
const NORMALIZATIONS: Normalization[] = ['token', 'sequence'];

type Patch = { [section: string]: Record<string, unknown> };
const VARIANTS: Record<string, Patch> = {
  trajectory: {},
  turn: { grpo: { gamma: GAMMA } },
  'turn+process': { grpo: { gamma: GAMMA }, process_rewards: { enabled: true, apply_to: 'turn' } },
  sequence: { grpo: { loss_normalization: 'sequence' } },
  recovery: { process_rewards: recoveryOnly() },
  'sequence+recovery': { grpo: { loss_normalization: 'sequence' }, process_rewards: recoveryOnly() },
  group16: { training: { group_size: 16 } },
};
/** The recovery bonus alone: no bonus for other working calls or thoughts, so only a retry that worked is rewarded. */
function recoveryOnly(): Record<string, unknown> {
  return { enabled: true, apply_to: 'score', tool_success_bonus: 0, thought_bonus: 0, recovery_bonus: 0.5 };
}
const NAMES = args.variants.split(',');
for (const name of NAMES)
  if (!VARIANTS[name]) throw new Error(`unknown variant "${name}"; variants: ${Object.keys(VARIANTS).join(', ')}`);

function configFor(name: string, seed: number): RunConfig {
  const patch = VARIANTS[name];
  const levels = Object.values(LEVELS);
  const base: Patch = {
    training: {
      max_steps: 1000,
      batch_size: ENVS.length * Number(args.groups),
      group_size: 8,
      grad_accum_steps: 4,
      learning_rate: Number(args.lr),
      warmup_steps: 3,
      checkpoint_every: 1000,
      eval_interval: 1000,
      eval_at_start: false,
    },
    grpo: { advantage: 'zscore', zero_std_groups: 'skip' },
    process_rewards: {},
    safety: { enabled: false },
    curriculum: { enabled: false },
    trajectory_collection: { n_workers: 2, max_steps_per_trajectory: TURNS },
    tasks: {
      environments: ENVS,
      difficulty_range: [Math.min(...levels), Math.max(...levels)],
      levels: LEVELS,
      eval_items: ITEMS,
    },
  };
  const merged = Object.fromEntries(
    Object.keys({ ...base, ...patch }).map((section) => [section, { ...base[section], ...patch[section] }]),
  );
  const { config, errors } = validateRunConfig({
    name: `bench-${name}-${seed}`,
    seed,
    model: { base_model: 'spindle-base' },
    lora: { r: 8, alpha: 16 },
    ...merged,
  });
  if (!config) throw new Error(JSON.stringify(errors));
  return config;
}

const setName = (s: { env: string; level: number }) => `${s.env} L${s.level}`;
const summary = (h: HeldOut) => ({ success: h.success, ci95: h.ci95, n: h.result.n, agent: h.agent });
type Summary = ReturnType<typeof summary>;

async function evaluateSets(loaded: Parameters<typeof heldOut>[0], id: string): Promise<Record<string, Summary>> {
  const out: Record<string, Summary> = {};
  for (const s of EVAL_SETS)
    out[setName(s)] = summary(await heldOut(loaded, id, s.env, s.level, ITEMS, { turns: TURNS }));
  return out;
}
const acts = (s: Summary) =>
  `${s.agent.calls_per_episode.toFixed(2)} calls, retried ${pct(s.agent.retry_rate)} and recovered ${pct(s.agent.recovery_rate)} of ${s.agent.failed_call_episodes} failed-call episodes`;

const modelPath = resolveModelPath(process.env.SPINDLE_BENCH_MODEL ?? 'spindle-base');
const loadBefore = loadavg();
console.log(`load average before: ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`);
const blind: Record<string, { task: number; part: number | null }> = {};
for (const s of EVAL_SETS) {
  const best = await bestBlindByKind(getEnvironment(s.env), s.level, { items: ITEMS, seed: EVAL_SEED });
  blind[setName(s)] = { task: best.task.success, part: best.part?.success ?? null };
}
const blindText = (key: string) =>
  `best task-blind ${pct(blind[key].task)}, part-blind ${blind[key].part === null ? '—' : pct(blind[key].part!)}`;
await initBackend();

const base = await loadHfModel(modelPath);
const before = await evaluateSets(base, 'spindle-base');
for (const s of EVAL_SETS) {
  const b = before[setName(s)];
  console.log(`before ${setName(s)}: ${showRate(b)} of ${b.n}; ${acts(b)}; ${blindText(setName(s))}`);
}
base.model.dispose();

const runs: {
  variant: string;
  seed: number;
  seconds: number;
  after: Record<string, Summary>;
  /** On the run's own training groups, weighed as each loss normalisation would weigh them. */
  post_failure: Record<Normalization, PostFailureMass>;
}[] = [];
for (const seed of SEEDS) {
  for (const name of NAMES) {
    // A fresh copy of the base for every run: a run trains its LoRA in place.
    const loaded = await loadHfModel(modelPath);
    const config = configFor(name, seed);
    const groups = new Map<string, Trajectory[]>();
    const { seconds } = await trainGrpo(loaded, config, {
      maxUpdates: UPDATES,
      budgetMs: Infinity,
      onEvent: (event) => {
        if (event.type !== 'trajectory') return;
        const t = event.trajectory;
        groups.set(t.group_id, [...(groups.get(t.group_id) ?? []), t]);
      },
    });
    const postFailure = Object.fromEntries(
      NORMALIZATIONS.map((n) => [
        n,
        postFailureMass([...groups.values()], { ...config, grpo: { ...config.grpo, loss_normalization: n } }),
      ]),
    ) as Record<Normalization, PostFailureMass>;
    const after = await evaluateSets(loaded, `grpo-${name}`);
    loaded.model.dispose();
    runs.push({ variant: name, seed, seconds, after, post_failure: postFailure });
    for (const n of NORMALIZATIONS) {
      const p = postFailure[n];
      console.log(
        `  after a failed call, in ${p.groups} trained groups weighed per ${n}: net push ${p.retried.toFixed(3)} on ${p.retried_episodes} episodes that retried, ${p.gave_up.toFixed(3)} on ${p.gave_up_episodes} that gave up`,
      );
    }
    for (const s of EVAL_SETS)
      console.log(
        `${name} seed ${seed} (${seconds.toFixed(0)} s) ${setName(s)}: ${showRate(after[setName(s)])}; ${acts(after[setName(s)])}`,
      );
    console.log(`  tensors ${tf.memory().numTensors}`);
  }
}

const spread = (xs: number[]) => ({ mean: mean(xs), sd: xs.length > 1 ? sampleStd(xs) : 0 });
const table = NAMES.map((name) => {
  const mine = runs.filter((r) => r.variant === name);
  const sets = Object.fromEntries(
    EVAL_SETS.map((s) => {
      const key = setName(s);
      const after = mine.map((r) => r.after[key]);
      return [
        key,
        {
          success: spread(after.map((a) => 100 * a.success)),
          gain: spread(after.map((a) => 100 * (a.success - before[key].success))),
          separated: after.filter((a) => a.ci95[0] > before[key].ci95[1]).length,
          calls_per_episode: spread(after.map((a) => a.agent.calls_per_episode)),
          retry_rate: spread(after.map((a) => 100 * a.agent.retry_rate)),
          recovery_rate: spread(after.map((a) => 100 * a.agent.recovery_rate)),
        },
      ];
    }),
  );
  const push = Object.fromEntries(
    NORMALIZATIONS.map((n) => [
      n,
      {
        retried: spread(mine.map((r) => r.post_failure[n].retried)),
        gave_up: spread(mine.map((r) => r.post_failure[n].gave_up)),
      },
    ]),
  ) as Record<Normalization, { retried: ReturnType<typeof spread>; gave_up: ReturnType<typeof spread> }>;
  return { variant: name, patch: VARIANTS[name], sets, push };
});
mkdirSync('bench/results', { recursive: true });
writeFileSync(
  `bench/results/${args.out}.json`,
  JSON.stringify(
    {
      benchmark: 'ablation',
      date: new Date().toISOString(),
      machine: 'Node 20, tfjs-wasm, 2 vCPU',
      load_average_before: loadBefore,
      load_average_end: loadavg(),
      envs: ENVS,
      levels: LEVELS,
      eval: EVAL_SETS,
      seeds: SEEDS,
      updates: UPDATES,
      groups_per_environment: Number(args.groups),
      items: ITEMS,
      turns: TURNS,
      lr: Number(args.lr),
      before,
      blind,
      runs,
      table,
    },
    null,
    2,
  ),
);
const pm = (x: { mean: number; sd: number }, digits = 1) => `${x.mean.toFixed(digits)} ± ${x.sd.toFixed(digits)}`;
console.log(
  `\n${SEEDS.length} seeds, ${UPDATES} updates of ${args.groups} group(s) per environment, ${ITEMS} distinct held-out items per set`,
);
console.log(
  '| variant | set | before | after (mean ± sd) | gain | seeds separated | calls per episode | retry rate | recovery rate |',
);
console.log('|---|---|---|---|---|---|---|---|---|');
for (const s of EVAL_SETS) {
  const b = before[setName(s)];
  console.log(
    `| base | ${setName(s)} | ${showRate(b)} | | | | ${b.agent.calls_per_episode.toFixed(2)} | ${pct(b.agent.retry_rate)} | ${pct(b.agent.recovery_rate)} (${blindText(setName(s))}) |`,
  );
}
for (const row of table)
  for (const [key, r] of Object.entries(row.sets))
    console.log(
      `| ${row.variant} | ${key} | | ${pm(r.success)}% | ${r.gain.mean >= 0 ? '+' : ''}${pm(r.gain)} | ${r.separated} of ${SEEDS.length} | ${pm(r.calls_per_episode, 2)} | ${pm(r.retry_rate)}% | ${pm(r.recovery_rate)}% |`,
    );
console.log(
  '\n| variant | net push after a failed call, weighed per token: retried | gave up | weighed per episode: retried | gave up |',
);
console.log('|---|---|---|---|---|');
for (const row of table)
  console.log(
    `| ${row.variant} | ${pm(row.push.token.retried, 3)} | ${pm(row.push.token.gave_up, 3)} | ${pm(row.push.sequence.retried, 3)} | ${pm(row.push.sequence.gave_up, 3)} |`,
  );
process.exit(0);
