/**
 * The learning benchmark (`npm run bench:learn`): GRPO from the shipped base model on three
 * environments for a fixed wall-clock budget on the wasm backend (2 cores), with held-out success
 * measured before and after on the SAME test items, greedy. Every rate is printed with its Wilson 95%
 * interval and, beside it, the best task-blind policy's success on those items
 * (src/rollout/blind-policies.ts), so a gain that a policy ignoring the task could match shows as such.
 *
 * Writes bench/results/learn.json (`{"envs": [{env, items, before: {success, ci95, tool_use}, after, blind_best}], ...}`)
 * and learn.svg (reward per update, held-out before/after). `tool_use` splits a rate: the share of episodes
 * that called the environment's tool and the success among those, so a gain shows whether the policy
 * learned to use its tool, to use it right, or both.
 *
 *   npm run bench:learn                       # 15-minute training budget
 *   npm run bench:learn -- --minutes 3        # a quick look
 *   npm run bench:learn -- --updates 40       # a fixed number of updates (comparisons that ignore the load)
 *   npm run bench:learn -- --levels 2         # every environment at level 2
 *   npm run bench:learn -- --envs arith_tool --levels arith_tool=3 --lr 1e-3
 *
 * Default levels: arith_tool 3, letter_count 2, shell_exec 2, where the shipped base's greedy success is
 * 27–61% (it answers some items without its tool and miscopies into the call on others). At levels 1–2
 * arith_tool is above 90% greedy, with little left to learn.
 */
import 'fake-indexeddb/auto';
import * as tf from '@tensorflow/tfjs';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { validateRunConfig } from '../src/config/validate.ts';
import { getEnvironment } from '../src/envs/registry.ts';
import { changedNothing } from '../src/envs/task-toolbox.ts';
import { loadHfModel } from '../src/model/hf.ts';
import { initBackend } from '../src/model/backend.ts';
import { createNodeRun, resolveModelPath } from '../src/pipeline/node.ts';
import { EnginePolicy, GenerationService } from '../src/pipeline/generation.ts';
import { evaluatePolicy, type EvalResult } from '../src/rollout/evaluate.ts';
import { bestBlindSuccess, type BlindResult } from '../src/rollout/blind-policies.ts';
import { wilsonInterval } from '../src/rollout/success-interval.ts';
import { openStore } from '../src/store/index.ts';
import type { RunEvent } from '../src/pipeline/events.ts';
import type { Policy } from '../src/rollout/policy.ts';
import type { Trajectory } from '../src/contracts.ts';
import { lineChartSvg } from './lib/svg-chart.ts';

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '15' }, updates: { type: 'string', default: 'Infinity' }, items: { type: 'string', default: '100' },
    envs: { type: 'string', default: 'arith_tool,letter_count,shell_exec' }, levels: { type: 'string', default: 'arith_tool=3,letter_count=2,shell_exec=2' },
    lr: { type: 'string', default: '5e-4' }, 'online-ratio': { type: 'string', default: '0.7' },
    iterations: { type: 'string', default: '1' }, temperature: { type: 'string', default: '1' },
  },
});
const BUDGET_MS = Number(args.minutes) * 60_000;
/** An update budget as well (`--updates 40`): experiments compared by updates do not depend on the machine's load. */
const MAX_UPDATES = Number(args.updates);
const ENVS = args.envs.split(',');
const ITEMS = Number(args.items);
/** The level of each environment, in training and in the held-out evaluation (`--levels 2` puts every environment at 2). */
const LEVELS: Record<string, number> = Object.fromEntries(ENVS.map((env) => {
  const given = args.levels.split(',').map((part) => part.split('='));
  const level = given.find(([name]) => name === env)?.[1] ?? (given.length === 1 && given[0].length === 1 ? given[0][0] : '1');
  return [env, Number(level)];
}));
const levelRange: [number, number] = [Math.min(...Object.values(LEVELS)), Math.max(...Object.values(LEVELS))];
/** The evaluation items: item i of an environment is generated from (EVAL_SEED, i), before and after alike. */
const EVAL_SEED = 2024;

const { config, errors } = validateRunConfig({
  name: 'bench-learn',
  seed: 11,
  model: { base_model: 'spindle-base' },
  lora: { r: 8, alpha: 16 },
  // One group per environment per update; micro-batches of a quarter keep activations inside the wasm heap.
  training: { max_steps: 1000, batch_size: ENVS.length, group_size: 8, grad_accum_steps: 4, learning_rate: Number(args.lr), warmup_steps: 3, checkpoint_every: 1000, eval_interval: 1000, eval_at_start: false },
  grpo: { advantage: 'zscore', zero_std_groups: 'skip', iterations: Number(args.iterations) },
  replay: { online_ratio: Number(args['online-ratio']) },
  sampling: { temperature: Number(args.temperature) },
  // The benchmark measures learning itself: no rollback, no level changes, held-out items only at the ends.
  safety: { enabled: false },
  curriculum: { enabled: false },
  trajectory_collection: { n_workers: 2, max_steps_per_trajectory: 3 },
  tasks: { environments: ENVS, difficulty_range: levelRange, levels: LEVELS, eval_items: ITEMS },
});
if (!config) throw new Error(JSON.stringify(errors));

interface Rate {
  success: number;
  ci95: [number, number];
}

/** tfjs-wasm's heap (it only grows, and past 4 GiB allocations fail): the run's memory high-water mark. */
const wasmHeapGiB = (): string => `${((tf.backend() as unknown as { wasm: { HEAPU8: Uint8Array } }).wasm.HEAPU8.length / 2 ** 30).toFixed(2)} GiB`;

const rate = (r: EvalResult): Rate => ({ success: r.success, ci95: wilsonInterval(Math.round(r.success * r.n), r.n) });
const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
const show = (r: Rate): string => `${pct(r.success)} [${pct(r.ci95[0])}, ${pct(r.ci95[1])}]`;

/** How a rate splits: the share of episodes that called the environment's tool, and the success among those. */
interface ToolUse {
  called: number;
  success_when_called: number;
}

async function heldOut(label: string, policy: Policy): Promise<{ results: EvalResult[]; toolUse: Map<string, ToolUse> }> {
  const results: EvalResult[] = [];
  const toolUse = new Map<string, ToolUse>();
  for (const name of ENVS) {
    const env = getEnvironment(name);
    let called = 0;
    let calledWins = 0;
    const onEpisode = (t: Trajectory, score: number | null) => {
      if (changedNothing(t, env.requiredTools)) return; // called none of the environment's tools
      called++;
      if (score === 1) calledWins++;
    };
    const [r] = await evaluatePolicy(policy, [env], { items: ITEMS, seed: EVAL_SEED, levels: [LEVELS[name]], concurrency: 16, maxSteps: 3, toolTimeoutMs: 15_000, onEpisode });
    results.push(r);
    toolUse.set(name, { called: called / r.n, success_when_called: called === 0 ? 0 : calledWins / called });
  }
  console.log(label);
  for (const r of results) {
    const u = toolUse.get(r.env)!;
    console.log(`  ${r.env} level ${r.level}: ${show(rate(r))} of ${r.n}; called its tool in ${pct(u.called)}, success when it did ${pct(u.success_when_called)}`);
  }
  return { results, toolUse };
}

const loadBefore = loadavg();
console.log(`load average before: ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`);
const blind = new Map<string, BlindResult>();
for (const env of ENVS) blind.set(env, await bestBlindSuccess(getEnvironment(env), LEVELS[env], { items: ITEMS, seed: EVAL_SEED }));
for (const [env, b] of blind) console.log(`best task-blind policy on ${env}: ${pct(b.success)} (${b.policy})`);

await initBackend();
const base = await loadHfModel(resolveModelPath(process.env.SPINDLE_BENCH_MODEL ?? 'spindle-base'));
const evalPolicy = (id: string) => new EnginePolicy(id, base.tokenizer, new GenerationService(() => base.model, base.tokenizer));
const before = await heldOut('held-out success before GRPO (greedy):', evalPolicy('spindle-base'));

const store = await openStore({ factory: new IDBFactory() });
const run = createNodeRun({ store, cores: 2, loadModel: async () => ({ model: base.model, tokenizer: base.tokenizer }) });
const curve: { step: number; reward: number; success: number; by_env: Record<string, number>; seconds: number }[] = [];
const started = performance.now();
let fatal: string | null = null;
run.subscribe((event: RunEvent) => {
  if (event.type === 'update') {
    const seconds = (performance.now() - started) / 1000;
    const m = event.metrics;
    const byEnv = Object.fromEntries(ENVS.filter((env) => m[`rollout/success/${env}`] !== undefined).map((env) => [env, m[`rollout/success/${env}`]]));
    curve.push({ step: event.step, reward: m.reward ?? 0, success: m['rollout/success'] ?? 0, by_env: byEnv, seconds });
    const envSuccess = Object.entries(byEnv).map(([env, s]) => `${env} ${s.toFixed(2)}`).join(' ');
    console.log(`update ${event.step} reward ${(m.reward ?? 0).toFixed(3)} success ${envSuccess} zero_std ${(m.frac_reward_zero_std ?? 0).toFixed(2)} loss ${(m['train/loss'] ?? 0).toFixed(4)} rollouts ${(m['perf/rollout_seconds'] ?? 0).toFixed(1)} s update ${(m['perf/update_seconds'] ?? 0).toFixed(1)} s heap ${wasmHeapGiB()} (${seconds.toFixed(0)} s)`);
    if (seconds * 1000 > BUDGET_MS || curve.length >= MAX_UPDATES) void run.stop();
  }
  if (event.type === 'error') console.log(`${event.fatal ? 'FATAL' : 'warning'}: ${event.message}`);
  if (event.type === 'error' && event.fatal) fatal = event.message;
});
await run.start(config);
await run.done();
if (fatal) {
  // The policy did not finish training: an "after" figure would measure the failure, not learning.
  console.error(`The run failed (${fatal}); bench/results/learn.json is left as it was. SPINDLE_DEBUG=1 prints the error's stack.`);
  process.exit(1);
}
const trainSeconds = (performance.now() - started) / 1000;
const loadDuring = loadavg();

// The run trained LoRA adapters on the loaded model in place: evaluate the same object again.
const after = await heldOut('held-out success after GRPO (greedy):', evalPolicy('spindle-grpo'));

const envs = ENVS.map((env) => {
  const b = { ...rate(before.results.find((r) => r.env === env)!), tool_use: before.toolUse.get(env)! };
  const a = { ...rate(after.results.find((r) => r.env === env)!), tool_use: after.toolUse.get(env)! };
  const blindBest = blind.get(env)!;
  return { env, level: LEVELS[env], items: ITEMS, before: b, after: a, blind_best: { success: blindBest.success, policy: blindBest.policy }, points: 100 * (a.success - b.success), separated: a.ci95[0] > b.ci95[1] };
});
const result = {
  benchmark: 'learn', date: new Date().toISOString(), machine: 'Node 20, tfjs-wasm, 2 vCPU', load_average_before: loadBefore, load_average_end_of_training: loadDuring,
  budget_minutes: Number(args.minutes), train_seconds: trainSeconds, updates: curve.length, config, envs, curve,
};
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/learn.json', JSON.stringify(result, null, 2));
writeFileSync('bench/results/learn.svg', lineChartSvg({
  title: `GRPO from spindle-base (${curve.length} updates, ${(trainSeconds / 60).toFixed(1)} min)`,
  xLabel: 'update',
  series: [
    { name: 'mean reward (train batch)', points: curve.map((c) => [c.step, c.reward]) },
    { name: 'success rate (train batch)', points: curve.map((c) => [c.step, c.success]) },
    ...envs.map((e) => ({ name: `${e.env} held-out success`, points: [[0, e.before.success], [curve.length, e.after.success]] as [number, number][] })),
  ],
}));
console.log('\n| environment | level | items | before | after | points | best task-blind | called its tool (before → after) | success when it did |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const e of envs) {
  const use = `${pct(e.before.tool_use.called)} → ${pct(e.after.tool_use.called)} | ${pct(e.before.tool_use.success_when_called)} → ${pct(e.after.tool_use.success_when_called)}`;
  console.log(`| ${e.env} | ${e.level} | ${e.items} | ${show(e.before)} | ${show(e.after)} | ${e.points >= 0 ? '+' : ''}${e.points.toFixed(1)}${e.separated ? ' (intervals separate)' : ''} | ${pct(e.blind_best.success)} | ${use} |`);
}
store.db.close();
process.exit(0);
