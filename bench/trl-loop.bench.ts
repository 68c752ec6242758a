/**
 * The whole loop against TRL (`npm run bench:trl`): in one run on this machine, TRL's
 * `GRPOTrainer` on PyTorch CPU (bench/trl/grpo_trl.py, in the Python that SPINDLE_TRL_PYTHON names) and
 * Spindle's GRPO through its real pipeline (bench/lib/learn-run.ts: createNodeRun, rollout workers, the
 * judge, the trainer) train LoRA on the same model, models/spindle-base, on the same task with the same
 * settings, and each reports seconds per update, generated tokens per second and greedy held-out success
 * before and after N updates on the same items. The headline is Spindle's updates per minute ÷ TRL's
 * (target ≥ 1, stretch 2).
 *
 * The task is single-turn (TRL's multi-turn tool path needs a chat template that renders tools, which the
 * shipped byte-level model does not have): the first turn of arith_tool at level 3 (three operands), as a
 * task file whose js verifier reads the completion text alone — success when it calls calc with the
 * question's expression (whitespace ignored). The base model does that in about a quarter of its samples at
 * T = 1 and half of its greedy answers (it answers "I know this." and a guess otherwise), so groups have a
 * spread and the held-out rate has room. The reward both sides train on is the score Spindle's run gives:
 * its rule judge (0.8 × that verdict + 0.2 × its format checks) through the verifier gate; grpo_trl.py
 * computes it in Python from the completion text. Checked in the run: transformers' logits against
 * reference-logits.json (which Spindle's forward is tested against), every prompt's token round trip
 * through the HF tokenizer, and the Python reward against every score of every group Spindle trained on
 * (a disagreement is printed as a warning and recorded). Held-out success is the verdict alone, greedy.
 *
 * Order: Spindle's held-out before, its N updates, its held-out after; then TRL's process (checks,
 * held-out before, N updates, held-out after). The load average is recorded before each half.
 *
 * Held the same on both sides: prompts (the task file's train rows, rendered by Spindle's chat format; TRL
 * gets them as plain text prompts), group size, groups per update, max new tokens, sampling (T 1, no
 * top-k/p), learning rate (constant, no warm-up), AdamW without decay, gradient clip 1, LoRA rank, alpha and
 * target modules, clip ε 0.2, no KL, one optimizer step per batch, DAPO token-mean loss, z-scored group
 * advantages, no replay. Where they differ: TRL keeps zero-spread groups (advantage 0, counted in the token
 * mean) where Spindle skips them; TRL runs with gradient checkpointing off (its default is on, which is slower).
 * The learning rate is 1e-3: at 2e-3, from the base after its func_trace pass, Spindle's run collapsed into answering
 * without the tool (held-out 51 → 0%, every group then zero-spread) where TRL's held (51 → 52%). Spindle skips zero-spread
 * groups where TRL counts them in its token mean, so at one learning rate Spindle's steps are the larger.
 * Seconds per update is the mean over updates 2…N (the first carries each side's start-up and is reported apart).
 *
 *   npm run bench:trl                      # 20 updates, 100 held-out items
 *   npm run bench:trl -- --updates 3 --items 16 --batch 2 --group 4   # a smoke run
 *   npm run bench:trl -- --batched         # trajectory_collection.reproducible false (on wasm the default batches turns already)
 *
 * Needs: a Python with torch 2.x (CPU), transformers, trl, peft, datasets, accelerate at SPINDLE_TRL_PYTHON
 * (default /work/trl-venv/bin/python); without it the benchmark says how to make one and exits 2.
 * Writes bench/results/trl-loop.json.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import * as tf from '@tensorflow/tfjs';
import { validateRunConfig } from '../src/config/validate.ts';
import type { Trajectory } from '../src/contracts.ts';
import { getEnvironment } from '../src/envs/registry.ts';
import { environmentNameFor, environmentSourceFromFile, installEnvironmentSource } from '../src/envs/sources.ts';
import { rowKey } from '../src/envs/task-file/index.ts';
import type { Environment } from '../src/envs/types.ts';
import { renderSystemPrompt } from '../src/format/index.ts';
import { initBackend } from '../src/kernels/backend.ts';
import { loadHfModel } from '../src/hub/hf.ts';
import type { TextTokenizer } from '../src/tokenizer/tokenizer.ts';
import { resolveModelPath } from '../src/pipeline/platform/node.ts';
import { conversationFormat } from '../src/format/conversation.ts';
import { wilsonInterval } from '../src/rollout/success-interval.ts';
import { TOOL_SCHEMAS } from '../src/sandbox/index.ts';
import { EVAL_SEED, heldOut, pct, showRate, trainGrpo, type HeldOut, type Loaded } from './lib/learn-run.ts';
import { bestBlindSuccess } from '../src/rollout/blind-policies.ts';

const { values: args } = parseArgs({
  options: {
    updates: { type: 'string', default: '20' },
    items: { type: 'string', default: '100' },
    batch: { type: 'string', default: '4' },
    group: { type: 'string', default: '8' },
    'max-new-tokens': { type: 'string', default: '96' },
    lr: { type: 'string', default: '1e-3' },
    rank: { type: 'string', default: '8' },
    level: { type: 'string', default: '3' },
    seed: { type: 'string', default: '11' },
    batched: { type: 'boolean', default: false },
  },
});
const UPDATES = Number(args.updates);
const ITEMS = Number(args.items);
const SHARED = {
  updates: UPDATES,
  batch: Number(args.batch),
  group: Number(args.group),
  max_new_tokens: Number(args['max-new-tokens']),
  learning_rate: Number(args.lr),
  lora: {
    r: Number(args.rank),
    alpha: 2 * Number(args.rank),
    dropout: 0,
    target_modules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
  },
  temperature: 1,
  top_p: 1,
  top_k: 0,
  clip_epsilon: 0.2,
  grad_clip: 1,
  weight_decay: 0,
  seed: Number(args.seed),
};
const LEVEL = Number(args.level);
const TASK_FILE = 'trl-calc.jsonl';
const ENV = environmentNameFor(TASK_FILE);
/** arith_tool questions drawn for the task file (its train/test split then goes by the task file's own hash of each prompt). */
const ROWS = 2000;
/** The rule, as the task file's js verifier (bench/trl/grpo_trl.py's calls_calc is the same in Python). */
const REWARD_SOURCE = `(answer, row, trajectory) => {
  const turn = trajectory.messages.find((m) => m.role === 'assistant');
  const text = (turn ? turn.content : '').replace(/\\s+/g, '');
  return text.includes('{"name":"calc","arguments":{"expression":"' + String(row.expression).replace(/\\s+/g, '') + '"}}');
}`;
const PYTHON = process.env.SPINDLE_TRL_PYTHON ?? '/work/trl-venv/bin/python';
const SETUP = `TRL's side needs a Python with torch 2.x (CPU), transformers, trl, peft, datasets and accelerate. Make one outside the repository:
  python3 -m venv /work/trl-venv
  /work/trl-venv/bin/pip install torch transformers trl peft datasets accelerate
(where pip resolves a CUDA build of torch, install torch first with --index-url https://download.pytorch.org/whl/cpu),
then run again, or set SPINDLE_TRL_PYTHON to an interpreter that has them.`;

const load = (): number[] => loadavg().map((l) => Number(l.toFixed(2)));
const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

function checkPython(): string {
  const probe = spawnSync(
    PYTHON,
    ['-c', 'import torch, transformers, trl, peft, datasets, accelerate; print(torch.__version__, trl.__version__)'],
    { encoding: 'utf8' },
  );
  if (probe.error || probe.status !== 0) {
    console.error(
      `${PYTHON} ${probe.error ? 'cannot be run' : "cannot import what TRL's side needs"}: ${(probe.error?.message ?? probe.stderr.trim().split('\n').pop()) || 'no output'}\n${SETUP}`,
    );
    process.exit(2);
  }
  return probe.stdout.trim();
}

/** The task file's rows: arith_tool questions at LEVEL, each with the expression its verifier checks, calc offered. */
function taskRows(): { prompt: string; answer: string; expression: string; tools: string[] }[] {
  const arith = getEnvironment('arith_tool');
  const seen = new Set<string>();
  const rows = [];
  for (let i = 0; rows.length < ROWS; i++) {
    const task = arith.generate(i, LEVEL, 'train');
    if (seen.has(task.prompt)) continue;
    seen.add(task.prompt);
    rows.push({
      prompt: task.prompt,
      answer: String(task.data.answer),
      expression: String(task.data.expression),
      tools: ['calc'],
    });
  }
  return rows;
}

/** The first-turn prompt Spindle's agent loop renders for a question (rollout/episode.ts's system prompt, then the user turn). */
function renderPrompt(env: Environment, tokenizer: TextTokenizer, question: string): string {
  const format = conversationFormat(tokenizer);
  const tools = env.requiredTools.map((t) => TOOL_SCHEMAS[t as keyof typeof TOOL_SCHEMAS]);
  const system = renderSystemPrompt(format.rendersTools ? [] : tools, {
    style: env.systemStyle,
    instructions: env.instructions,
  });
  return format.prompt([system, { role: 'user', content: question }], tools);
}

/** An episode's prompt ids (up to its first sampled token) and its first turn's sampled ids. */
function firstTurn(t: Trajectory): { prompt: number[]; completion: number[] } {
  const first = t.assistant_mask.indexOf(1);
  const end = t.assistant_mask.indexOf(0, first);
  return { prompt: t.tokens.slice(0, first), completion: t.tokens.slice(first, end < 0 ? undefined : end) };
}

/** Spindle's forward on the builder's reference transcript: the largest logit difference (transformers' is checked in Python). */
function spindleLogitsDiff(loaded: Loaded, modelDir: string): number {
  const ref = JSON.parse(readFileSync(join(modelDir, 'reference-logits.json'), 'utf8')) as {
    tokens: number[];
    positions: number[];
    logits: number[][];
  };
  const logits = tf.tidy(() => loaded.model.forward([ref.tokens]).logits.squeeze([0])).arraySync() as number[][];
  return Math.max(...ref.positions.flatMap((p, i) => logits[p].map((x, j) => Math.abs(x - ref.logits[i][j]))));
}

interface TrlResult {
  versions: Record<string, string>;
  torch_threads: number;
  checks: {
    logits_max_abs_diff: number;
    train_prompts_round_trip: string;
    test_prompts_round_trip: string;
    reward_agrees: string;
    reward_mismatches: unknown[];
  };
  before: { success: number; n: number; scores: number[] };
  after: { success: number; n: number; scores: number[] };
  update_seconds: number[];
  generation_seconds: number;
  generated_tokens: number;
  trainable_parameters: number;
  logs: Record<string, number>[];
}

const versions = checkPython();
const loadBefore = load();
console.log(
  `load average before: ${loadBefore.join(' ')}${loadBefore[0] > 1.2 ? ' (the machine is busy: these figures are taken under load)' : ''}`,
);
console.log(`TRL's side: ${PYTHON} (torch ${versions.split(' ')[0]}, trl ${versions.split(' ')[1]})`);

await initBackend();
const modelDir = resolveModelPath(process.env.SPINDLE_BENCH_MODEL ?? 'spindle-base');
const rows = taskRows();
const source = await environmentSourceFromFile(rows.map((r) => JSON.stringify(r)).join('\n'), TASK_FILE, {
  verifier: { type: 'js', source: REWARD_SOURCE },
});
const env = await installEnvironmentSource(source);
const base = await loadHfModel(modelDir);
const spindleLogits = spindleLogitsDiff(base, modelDir);
const trainRows = rows.filter((r) => env.splitOf(rowKey({ prompt: r.prompt, answer: r.answer })) === 'train');
console.log(
  `task: ${ENV}, the first turn of arith_tool level ${LEVEL}; ${rows.length} questions, ${trainRows.length} in the train split; success: the completion calls calc with the question's expression; reward: Spindle's judge score (0.8 × success + 0.2 × format checks, gated)`,
);

const turn = { turns: 1, maxNewTokens: SHARED.max_new_tokens };
const before = await heldOut(base, 'spindle-base', ENV, 1, ITEMS, turn);
const testEpisodes = before.episodes.map((t) => ({ t, ...firstTurn(t) }));
const renderedMismatch = testEpisodes.filter(
  ({ t, prompt }) =>
    base.tokenizer.encode(renderPrompt(env, base.tokenizer, t.task_description)).join() !== prompt.join(),
).length;
if (renderedMismatch)
  throw new Error(
    `${renderedMismatch} held-out prompts rendered here differ from the agent loop's; TRL would train on other prompts`,
  );
const trainPrompts = trainRows.map((r) => renderPrompt(env, base.tokenizer, r.prompt));
console.log(
  `Spindle: held-out before ${showRate(before)} of ${before.result.n}; logits against the reference ${spindleLogits.toExponential(1)}`,
);
// The best task-blind policy on the same held-out items: a gain it could match would not be learning the task.
const blind = await bestBlindSuccess(env, 1, { items: ITEMS, seed: EVAL_SEED });
console.log(`best task-blind policy on the held-out items: ${pct(blind.success)} of ${blind.n} (${blind.policy})`);

// Spindle's side: N updates through the real run (rollout workers, judge, trainer). Its scored groups are
// kept: the Python reward must give every member the score Spindle trained on.
const config = validateRunConfig({
  name: 'bench-trl-loop',
  seed: SHARED.seed,
  model: { base_model: 'spindle-base' },
  lora: { r: SHARED.lora.r, alpha: SHARED.lora.alpha, dropout: 0, target_modules: SHARED.lora.target_modules },
  training: {
    max_steps: 100_000,
    batch_size: SHARED.batch,
    group_size: SHARED.group,
    grad_accum_steps: 1,
    learning_rate: SHARED.learning_rate,
    warmup_steps: 0,
    optimizer: 'adamw',
    weight_decay: SHARED.weight_decay,
    grad_clip: SHARED.grad_clip,
    checkpoint_every: 100_000,
    eval_interval: 100_000,
    eval_at_start: false,
  },
  grpo: { advantage: 'zscore', zero_std_groups: 'skip', iterations: 1, clip_epsilon: SHARED.clip_epsilon, kl_beta: 0 },
  replay: { online_ratio: 1 },
  sampling: {
    temperature: SHARED.temperature,
    top_k: SHARED.top_k,
    top_p: SHARED.top_p,
    max_new_tokens: SHARED.max_new_tokens,
  },
  safety: { enabled: false },
  curriculum: { enabled: false },
  // The default (reproducible) batches concurrent episodes' turns on wasm, where a row samples what it samples
  // alone (GenerationService.forRun), an update's episodes in flight (episodesInFlight); --batched turns
  // reproducibility off, still on-policy (none ahead).
  trajectory_collection: {
    n_workers: 2,
    max_steps_per_trajectory: 1,
    ...(args.batched ? { reproducible: false, max_offpolicy_updates: 0 } : {}),
  },
  tasks: { environments: [ENV], difficulty_range: [1, 1], levels: { [ENV]: 1 }, eval_items: ITEMS },
});
if (!config.config) throw new Error(JSON.stringify(config.errors));
const groups = new Map<string, Trajectory[]>();
const loadBeforeSpindle = load();
console.log(
  `\nSpindle GRPO, ${args.batched ? 'turns of concurrent episodes batched (--batched)' : "the reproducible default: turns of an update's episodes batched, each as it samples alone"} (load average ${loadBeforeSpindle.join(' ')}):`,
);
const { curve } = await trainGrpo(base, config.config, {
  maxUpdates: UPDATES,
  budgetMs: Infinity,
  onEvent: (event) => {
    if (event.type === 'trajectory')
      groups.set(event.trajectory.group_id, [...(groups.get(event.trajectory.group_id) ?? []), event.trajectory]);
  },
  onUpdate: ({ step, metrics: m, seconds }) =>
    console.log(
      `update ${step} reward ${(m.reward ?? 0).toFixed(3)} rollouts ${(m['perf/rollout_seconds'] ?? 0).toFixed(2)} s update ${(m['perf/update_seconds'] ?? 0).toFixed(2)} s (${seconds.toFixed(1)} s)`,
    ),
});
const after = await heldOut(base, 'spindle-grpo', ENV, 1, ITEMS, turn);

// TRL's side, in one Python process.
const work = mkdtempSync(join(tmpdir(), 'spindle-trl-'));
const expressionOf = new Map(rows.map((r) => [r.prompt, r.expression]));
const parity = [...groups.values()]
  .filter((g) => g.every((t) => t.judge_score !== null))
  .map((g) =>
    g.map((t) => ({
      completion_ids: firstTurn(t).completion,
      expression: expressionOf.get(t.task_description)!,
      score: t.judge_score,
    })),
  );
const spec = {
  model_dir: resolve(modelDir),
  work_dir: join(work, 'trainer'),
  config: SHARED,
  train: trainRows.map((r, i) => ({
    prompt: trainPrompts[i],
    prompt_ids: base.tokenizer.encode(trainPrompts[i]),
    expression: r.expression,
  })),
  test: testEpisodes.map(({ t, prompt }) => ({
    prompt_ids: prompt,
    expression: expressionOf.get(t.task_description)!,
  })),
  parity,
};
writeFileSync(join(work, 'spec.json'), JSON.stringify(spec));
const loadBeforeTrl = load();
console.log(`\nTRL GRPOTrainer (load average ${loadBeforeTrl.join(' ')}):`);
const py = spawnSync(PYTHON, [resolve('bench/trl/grpo_trl.py'), join(work, 'spec.json'), join(work, 'out.json')], {
  stdio: ['ignore', 'inherit', 'inherit'],
  env: {
    ...process.env,
    HF_HUB_OFFLINE: '1',
    HF_DATASETS_OFFLINE: '1',
    TRANSFORMERS_VERBOSITY: 'error',
    PYTHONWARNINGS: 'ignore',
    TOKENIZERS_PARALLELISM: 'false',
  },
});
if (py.status !== 0) throw new Error(`TRL's side failed (exit ${py.status}); its output is above`);
const trl = JSON.parse(readFileSync(join(work, 'out.json'), 'utf8')) as TrlResult;
rmSync(work, { recursive: true, force: true });
const loadAfter = load();
const parityCount = parity.flat().length;
const problems = [
  trl.checks.logits_max_abs_diff > 1e-3 &&
    `transformers' logits differ from the reference by ${trl.checks.logits_max_abs_diff}`,
  trl.checks.train_prompts_round_trip !== `${spec.train.length}/${spec.train.length}` &&
    `train prompts round trip ${trl.checks.train_prompts_round_trip}`,
  trl.checks.test_prompts_round_trip !== `${spec.test.length}/${spec.test.length}` &&
    `test prompts round trip ${trl.checks.test_prompts_round_trip}`,
  trl.checks.reward_agrees !== `${parityCount}/${parityCount}` &&
    `the Python reward agrees on ${trl.checks.reward_agrees} (${JSON.stringify(trl.checks.reward_mismatches)})`,
].filter(Boolean);
if (problems.length) console.log(`\nWARNING: the two sides do not compute the same thing: ${problems.join('; ')}`);

// Per update: the first includes each side's start-up; the rate is over updates 2…N.
const spindleSteps = curve.map((p, i) => p.seconds - (i === 0 ? 0 : curve[i - 1].seconds));
const steady = (steps: number[]) => mean(steps.length > 1 ? steps.slice(1) : steps);
const spindleRate = steady(spindleSteps);
const trlRate = steady(trl.update_seconds);
const ratio = trlRate / spindleRate;
const spindleTokensPerS = curve.at(-1)?.metrics['perf/tokens_per_second'] ?? 0;
const trlTokensPerS = trl.generated_tokens / trl.generation_seconds;
const rate = (success: number, n: number) => showRate({ success, ci95: wilsonInterval(Math.round(success * n), n) });
const spindleRewards = curve.map((p) => p.metrics.reward ?? 0);
const trlRewards = trl.logs.map((l) => l.reward ?? 0);

console.log(
  `\n| | seconds per update (2…${UPDATES}) | first update | generated tok/s | mean reward, first → last update | held-out before | held-out after ${UPDATES} updates |`,
);
console.log('|---|---|---|---|---|---|---|');
console.log(
  `| Spindle (tfjs-wasm, Node${args.batched ? ', batched' : ''}) | ${spindleRate.toFixed(2)} | ${spindleSteps[0]?.toFixed(2)} | ${spindleTokensPerS.toFixed(0)} | ${spindleRewards[0]?.toFixed(2)} → ${spindleRewards.at(-1)?.toFixed(2)} | ${showRate(before)} | ${showRate(after)} |`,
);
console.log(
  `| TRL ${trl.versions.trl} (torch ${trl.versions.torch}, ${trl.torch_threads} threads) | ${trlRate.toFixed(2)} | ${trl.update_seconds[0]?.toFixed(2)} | ${trlTokensPerS.toFixed(0)} | ${trlRewards[0]?.toFixed(2)} → ${trlRewards.at(-1)?.toFixed(2)} | ${rate(trl.before.success, trl.before.n)} | ${rate(trl.after.success, trl.after.n)} |`,
);
console.log(
  `\nSpindle updates/min ÷ TRL updates/min: ${ratio.toFixed(2)}× (${(60 / spindleRate).toFixed(1)} vs ${(60 / trlRate).toFixed(1)} per minute; target ≥ 1, stretch 2)`,
);
console.log(
  `checks: logits against the reference, Spindle ${spindleLogits.toExponential(1)}, transformers ${trl.checks.logits_max_abs_diff.toExponential(1)}; prompts round trip ${trl.checks.train_prompts_round_trip} train, ${trl.checks.test_prompts_round_trip} test; the Python reward gives ${trl.checks.reward_agrees} of Spindle's training scores; greedy base success ${pct(before.success)} (Spindle) vs ${pct(trl.before.success)} (transformers) on the same ${before.result.n} items`,
);
console.log(
  `load average: ${loadBefore.join(' ')} before, ${loadBeforeSpindle.join(' ')} before Spindle's training, ${loadBeforeTrl.join(' ')} before TRL, ${loadAfter.join(' ')} at the end`,
);

const summary = (h: HeldOut) => ({ success: h.success, ci95: h.ci95, n: h.result.n });
/** TRL's held-out rate with the same Wilson interval on its distinct items. */
const trlSummary = (h: { success: number; n: number }) => ({
  success: h.success,
  ci95: wilsonInterval(Math.round(h.success * h.n), h.n),
  n: h.n,
});
const result = {
  benchmark: 'trl-loop',
  date: new Date().toISOString(),
  machine: 'Node 20 tfjs-wasm / PyTorch CPU, 2 vCPU',
  load_average: {
    before: loadBefore,
    before_spindle_training: loadBeforeSpindle,
    before_trl: loadBeforeTrl,
    end: loadAfter,
  },
  parity_problems: problems,
  task: {
    env: ENV,
    source: `arith_tool level ${LEVEL}, first turn`,
    rows: rows.length,
    train_rows: trainRows.length,
    reward: REWARD_SOURCE,
  },
  best_blind: blind,
  shared: SHARED,
  spindle_batched: args.batched,
  ratio_updates_per_minute: ratio,
  spindle: {
    seconds_per_update: spindleRate,
    first_update_seconds: spindleSteps[0],
    update_seconds: spindleSteps,
    tokens_per_second: spindleTokensPerS,
    rollout_seconds: curve.map((p) => p.metrics['perf/rollout_seconds'] ?? 0),
    optimizer_seconds: curve.map((p) => p.metrics['perf/update_seconds'] ?? 0),
    rewards: spindleRewards,
    before: summary(before),
    after: summary(after),
    logits_max_abs_diff: spindleLogits,
    config: config.config,
  },
  trl: {
    seconds_per_update: trlRate,
    first_update_seconds: trl.update_seconds[0],
    update_seconds: trl.update_seconds,
    tokens_per_second: trlTokensPerS,
    generation_seconds: trl.generation_seconds,
    rewards: trlRewards,
    before: trlSummary(trl.before),
    after: trlSummary(trl.after),
    versions: trl.versions,
    torch_threads: trl.torch_threads,
    trainable_parameters: trl.trainable_parameters,
    checks: trl.checks,
  },
};
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/trl-loop.json', JSON.stringify(result, null, 2) + '\n');
console.log('wrote bench/results/trl-loop.json');
process.exit(0);
