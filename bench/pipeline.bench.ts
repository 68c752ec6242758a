/**
 * Rollout throughput: the same episodes through the worker pipeline with 1, 2, 4 and 8 rollout
 * worker_threads (engine-batched generation), 2 workers of 4 episodes each (8 in flight), 2 workers with a run's
 * default in flight on 2 cores (GenerationService.episodesInFlight: all 24 for spindle-base), and
 * 2 and 4 with each turn alone, against a plain single-threaded loop (LocalPolicy, one episode after
 * another, Spindle's kernels on one thread), in one run. The same loop with the kernels on every core is
 * a row of its own: what one episode at a time gets from the kernel threads alone. Prints
 * trajectories/min and generated tokens/s with ratios against the single-threaded reference; writes
 * bench/results/pipeline.json.
 *
 * The episodes are the multi-step environments' level 1 (file_chain, order_total: two to three dependent
 * tool calls, up to 6 turns) unless `--envs` names others. The load average is recorded before and after.
 *
 *   npx tsx bench/pipeline.bench.ts [--episodes 24] [--envs file_chain,order_total] [--steps 6]
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import type { SamplingParams, Task, Trajectory } from '../src/contracts.ts';
import { getEnvironment } from '../src/envs/registry.ts';
import { initBackend } from '../src/kernels/backend.ts';
import { setKernelThreads } from '../src/kernels/wasm-simd/heap-kernels.ts';
import { ByteTokenizer } from '../src/tokenizer/byte-tokenizer.ts';
import { presetConfig } from '../src/model/config.ts';
import { loadHfModel } from '../src/hub/hf.ts';
import { TransformerModel } from '../src/model/transformer.ts';
import { GenerationService } from '../src/pipeline/engine/generation.ts';
import { resolveModelPath, spawnNodeRolloutWorker } from '../src/pipeline/platform/node.ts';
import { configuredWorker, type EpisodeJob, type RolloutSettings } from '../src/pipeline/engine/rollout-protocol.ts';
import { WorkerPool } from '../src/pipeline/engine/worker-pool.ts';
import { runEpisode } from '../src/rollout/episode.ts';
import { LocalPolicy } from '../src/rollout/local-policy.ts';
import type { TextTokenizer } from '../src/tokenizer/tokenizer.ts';

const { values: args } = parseArgs({
  options: {
    episodes: { type: 'string', default: '24' },
    envs: { type: 'string', default: 'file_chain,order_total' },
    steps: { type: 'string', default: '6' },
  },
});
const EPISODES = Number(args.episodes);
const MAX_STEPS = Number(args.steps);
const load = () => loadavg().map((x) => Number(x.toFixed(2)));
const loadBefore = load();
const SAMPLING: SamplingParams = { temperature: 1, top_k: 0, top_p: 1, max_new_tokens: 64 };

const { kernelThreads } = await initBackend();
const cores = kernelThreads ?? 1;
const shipped = resolveModelPath('spindle-base');
const { model, tokenizer }: { model: TransformerModel; tokenizer: TextTokenizer } = existsSync(
  `${shipped}/model.safetensors`,
)
  ? await loadHfModel(shipped)
  : { model: TransformerModel.create(presetConfig('nano', 266), 1), tokenizer: new ByteTokenizer() };

const envs = args.envs.split(',').map(getEnvironment);
const tasks: Task[] = Array.from({ length: EPISODES }, (_, i) => envs[i % envs.length].generate(1000 + i, 1, 'train'));

interface Measure {
  label: string;
  seconds: number;
  trajectories: number;
  tokens: number;
  toolCalls: number;
}

const sampledTokens = (ts: Trajectory[]) => ts.reduce((n, t) => n + t.assistant_mask.reduce((a, b) => a + b, 0), 0);
const toolCalls = (ts: Trajectory[]) => ts.reduce((n, t) => n + t.steps.filter((s) => s.tool_call).length, 0);

/** The loop of one episode after another, Spindle's kernels on `threads` threads. */
async function loop(threads: number): Promise<Measure> {
  setKernelThreads(threads);
  const policy = new LocalPolicy(model, tokenizer);
  // Same warm-up as the pipelined runs: one episode before the clock starts.
  await runEpisode({
    policy,
    env: getEnvironment(tasks[0].env),
    task: tasks[0],
    seed: 0,
    sampling: SAMPLING,
    maxSteps: MAX_STEPS,
  });
  const started = performance.now();
  const out: Trajectory[] = [];
  for (const task of tasks)
    out.push(
      await runEpisode({
        policy,
        env: getEnvironment(task.env),
        task,
        seed: task.seed,
        sampling: SAMPLING,
        maxSteps: MAX_STEPS,
      }),
    );
  const seconds = (performance.now() - started) / 1000;
  setKernelThreads(cores);
  return {
    label: threads === 1 ? 'single-threaded loop' : `loop, kernels on ${threads} threads`,
    seconds,
    trajectories: out.length,
    tokens: sampledTokens(out),
    toolCalls: toolCalls(out),
  };
}

/** `alone`: each turn in a forward pass of its own (trajectory_collection.reproducible, the run default). */
async function pipelined(
  workers: number,
  alone = false,
  jobsPerWorker = 1,
  batching = { maxBatch: 16, windowMs: 4 },
): Promise<Measure> {
  const service = new GenerationService(() => model, tokenizer, alone ? GenerationService.ALONE : batching);
  const pool = new WorkerPool<EpisodeJob, Trajectory>(
    (i) =>
      configuredWorker(
        spawnNodeRolloutWorker(i, { generate: (r) => service.generate(r), release: (e) => service.release(e) }),
        SETTINGS,
      ),
    { size: workers, jobsPerWorker, hangTimeoutMs: 300_000, maxAttempts: 2 },
  );
  // Warm-up: worker threads boot (tsx, QuickJS) before the clock starts.
  await Promise.all(Array.from({ length: workers }, (_, i) => pool.submit(job(tasks[i % tasks.length], `warm-${i}`))));
  const started = performance.now();
  const out = await Promise.all(tasks.map((t, i) => pool.submit(job(t, `ep-${i}`))));
  const seconds = (performance.now() - started) / 1000;
  pool.close();
  const each = jobsPerWorker > 1 ? ` × ${jobsPerWorker} episodes each` : '';
  return {
    label: `${workers} rollout worker${workers > 1 ? 's' : ''}${each}${alone ? ', each turn alone' : ', batched'}`,
    seconds,
    trajectories: out.length,
    tokens: sampledTokens(out),
    toolCalls: toolCalls(out),
  };
}

/** Every worker's settings: the episodes' budgets, scored by their environment alone. */
const SETTINGS: RolloutSettings = {
  run_id: null,
  max_steps: MAX_STEPS,
  tool_timeout_ms: 2000,
  tools: [],
  judges: [],
  n_judges: null,
  min_votes: 1,
  verifier_gate: true,
  environments: [],
};

function job(task: Task, id: string): EpisodeJob {
  return { trajectory_id: id, group_id: id, task, seed: task.seed, sampling: SAMPLING, judging: 'env' };
}

const reference = await loop(1);
const rows: Measure[] = [reference, await loop(cores)];
for (const n of [1, 2, 4, 8]) rows.push(await pipelined(n));
rows.push(await pipelined(2, false, 4));
// A run's default where turns batch: a worker per core, an update's episodes in flight where the model's cache allows (run.ts).
rows.push(
  await pipelined(
    2,
    false,
    Math.ceil(GenerationService.episodesInFlight(EPISODES, model.config) / 2),
    GenerationService.BATCHED,
  ),
);
for (const n of [2, 4]) rows.push(await pipelined(n, true));

const perMin = (m: Measure) => (60 * m.trajectories) / m.seconds;
const tokPerSec = (m: Measure) => m.tokens / m.seconds;
const loadAfter = load();
console.log(
  `\n${EPISODES} episodes (${args.envs} level 1, ≤${MAX_STEPS} turns, ≤64 new tokens per turn); load average before ${loadBefore.join(' ')}, after ${loadAfter.join(' ')}\n`,
);
console.log('| setup | trajectories/min | generated tokens/s | tool calls/episode | × single-threaded |');
console.log('|---|---|---|---|---|');
for (const m of rows)
  console.log(
    `| ${m.label} | ${perMin(m).toFixed(1)} | ${tokPerSec(m).toFixed(1)} | ${(m.toolCalls / m.trajectories).toFixed(2)} | ${(perMin(m) / perMin(reference)).toFixed(2)} |`,
  );

mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/pipeline.json',
  JSON.stringify(
    {
      benchmark: 'pipeline',
      date: new Date().toISOString(),
      machine: 'Node 20, tfjs-wasm, 2 vCPU (shared)',
      episodes: EPISODES,
      envs: args.envs,
      level: 1,
      max_steps: MAX_STEPS,
      load_before: loadBefore,
      load_after: loadAfter,
      rows: rows.map((m) => ({
        ...m,
        trajectories_per_min: perMin(m),
        tokens_per_second: tokPerSec(m),
        ratio_vs_single: perMin(m) / perMin(reference),
      })),
    },
    null,
    2,
  ),
);
process.exit(0);
