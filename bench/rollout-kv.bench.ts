/**
 * Turn-cache reuse in multi-step rollouts (`npm run bench:rollout-kv`): the same episodes (file_chain,
 * func_trace and order_total at levels 2–3, the shipped model, up to 6 turns of up to 64 new tokens) with
 * each turn prefilling its whole conversation (the reference) and with each episode's keys and values
 * kept between its turns (sampling.ts TurnCache, model/turn-cache.ts), in the same run, alternately.
 * Two setups: one episode after another (LocalPolicy), and every episode in flight at once through the
 * engine's batched GenerationService (a run's rollouts). Prints rollout tokens per second (every token of
 * the trajectories, prompts and sampled, and the sampled ones alone) for each, the median of the repeats
 * with their min–max, and the ratio to the full prefill; the target is ≥ 2×. The episodes are checked to be
 * the same tokens both ways. Writes bench/results/rollout-kv.json with the load average before and after.
 *
 *   npx tsx bench/rollout-kv.bench.ts [--episodes 12] [--repeats 3] [--steps 6] [--setups loop,batched]
 *
 * A smoke run: `--episodes 3 --repeats 1`.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import type { SamplingParams, Task, Trajectory } from '../src/contracts.ts';
import { getEnvironment } from '../src/envs/registry.ts';
import { loadHfModel } from '../src/hub/hf.ts';
import { initBackend } from '../src/kernels/backend.ts';
import { EnginePolicy, GenerationService } from '../src/pipeline/engine/generation.ts';
import { resolveModelPath } from '../src/pipeline/platform/node.ts';
import { runEpisode } from '../src/rollout/episode.ts';
import { LocalPolicy } from '../src/rollout/local-policy.ts';
import type { Policy } from '../src/rollout/policy.ts';

const { values: args } = parseArgs({
  options: {
    episodes: { type: 'string', default: '12' },
    repeats: { type: 'string', default: '3' },
    steps: { type: 'string', default: '6' },
    setups: { type: 'string', default: 'loop,batched' },
  },
});
const EPISODES = Number(args.episodes);
const REPEATS = Number(args.repeats);
const MAX_STEPS = Number(args.steps);
const ENVS = ['file_chain', 'func_trace', 'order_total'];
const LEVELS = [2, 3];
const TARGET = 2;
const SAMPLING: SamplingParams = { temperature: 1, top_k: 0, top_p: 1, max_new_tokens: 64 };
const load = () => loadavg().map((x) => Number(x.toFixed(2)));
const loadBefore = load();

await initBackend();
const shipped = resolveModelPath('spindle-base');
if (!existsSync(`${shipped}/model.safetensors`)) throw new Error(`The shipped model is missing: ${shipped}`);
const { model, tokenizer } = await loadHfModel(shipped);

const tasks: Task[] = Array.from({ length: EPISODES }, (_, i) =>
  getEnvironment(ENVS[i % ENVS.length]).generate(
    2000 + i,
    LEVELS[Math.floor(i / ENVS.length) % LEVELS.length],
    'train',
  ),
);
const play = (policy: Policy, task: Task, i: number) =>
  runEpisode({ policy, env: getEnvironment(task.env), task, seed: 9000 + i, sampling: SAMPLING, maxSteps: MAX_STEPS });

type Setup = 'loop' | 'batched';

/** The episodes under one setup, with or without turn caches: their trajectories and the wall time. */
async function rollout(setup: Setup, reuse: boolean): Promise<{ seconds: number; trajectories: Trajectory[] }> {
  const started = performance.now();
  let trajectories: Trajectory[];
  if (setup === 'loop') {
    const policy = new LocalPolicy(model, tokenizer, { reuseTurnCaches: reuse });
    trajectories = [];
    for (const [i, task] of tasks.entries()) trajectories.push(await play(policy, task, i));
  } else {
    const service = new GenerationService(() => model, tokenizer, GenerationService.BATCHED, undefined, reuse);
    const policy = new EnginePolicy('local', tokenizer, service);
    trajectories = await Promise.all(tasks.map((task, i) => play(policy, task, i)));
  }
  return { seconds: (performance.now() - started) / 1000, trajectories };
}

const allTokens = (ts: Trajectory[]) => ts.reduce((n, t) => n + t.tokens.length, 0);
const sampledTokens = (ts: Trajectory[]) => ts.reduce((n, t) => n + t.assistant_mask.reduce((a, b) => a + b, 0), 0);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

interface Row {
  setup: Setup;
  reuse: boolean;
  seconds: number[];
  tokens: number;
  sampled: number;
  turns: number;
}

await rollout('loop', true); // warm-up: V8 and the kernels, before any clock starts
const rows: Row[] = [];
let mismatches = 0;
for (const setup of args.setups.split(',') as Setup[]) {
  const full: Row = { setup, reuse: false, seconds: [], tokens: 0, sampled: 0, turns: 0 };
  const kept: Row = { ...full, reuse: true, seconds: [] };
  for (let r = 0; r < REPEATS; r++) {
    // Alternately, so a change in the machine's load falls on both.
    const order: Row[] = r % 2 === 0 ? [full, kept] : [kept, full];
    const runs: Trajectory[][] = [];
    for (const row of order) {
      const { seconds, trajectories } = await rollout(setup, row.reuse);
      row.seconds.push(seconds);
      row.tokens = allTokens(trajectories);
      row.sampled = sampledTokens(trajectories);
      row.turns = trajectories.reduce((n, t) => n + t.turn_spans.length, 0);
      runs.push(trajectories);
    }
    runs[0].forEach((t, i) => {
      if (JSON.stringify(t.tokens) !== JSON.stringify(runs[1][i].tokens)) mismatches++;
    });
  }
  rows.push(full, kept);
}

const loadAfter = load();
const perSecond = (tokens: number, seconds: number) => tokens / seconds;
const summary = rows.map((row) => {
  const rates = row.seconds.map((s) => perSecond(row.tokens, s));
  const reference = rows.find((r) => r.setup === row.setup && !r.reuse)!;
  return {
    ...row,
    tokens_per_second: median(rates),
    tokens_per_second_min: Math.min(...rates),
    tokens_per_second_max: Math.max(...rates),
    sampled_tokens_per_second: perSecond(row.sampled, median(row.seconds)),
    ratio: median(reference.seconds) / median(row.seconds),
  };
});
console.log(
  `\n${EPISODES} episodes (${ENVS.join(', ')} at levels ${LEVELS.join('–')}, ≤${MAX_STEPS} turns, ≤${SAMPLING.max_new_tokens} new tokens per turn), median of ${REPEATS}; load average before ${loadBefore.join(' ')}, after ${loadAfter.join(' ')}\n`,
);
console.log('| setup | prefill | rollout tokens/s (min–max) | sampled tokens/s | turns | × full prefill |');
console.log('|---|---|---|---|---|---|');
for (const s of summary)
  console.log(
    `| ${s.setup === 'loop' ? 'one episode at a time' : 'all in flight, batched'} | ${s.reuse ? 'turn caches' : 'full'} | ${s.tokens_per_second.toFixed(0)} (${s.tokens_per_second_min.toFixed(0)}–${s.tokens_per_second_max.toFixed(0)}) | ${s.sampled_tokens_per_second.toFixed(1)} | ${s.turns} | ${s.ratio.toFixed(2)} |`,
  );
const reached = summary.filter((s) => s.reuse).every((s) => s.ratio >= TARGET);
console.log(
  `\nTarget ≥ ${TARGET}× with turn caches: ${reached ? 'met' : 'not met'}. Episodes whose tokens differ between the two: ${mismatches}.`,
);

mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/rollout-kv.json',
  JSON.stringify(
    {
      benchmark: 'rollout-kv',
      date: new Date().toISOString(),
      machine: 'Node 20, tfjs-wasm, 2 vCPU (shared)',
      episodes: EPISODES,
      envs: ENVS,
      levels: LEVELS,
      max_steps: MAX_STEPS,
      repeats: REPEATS,
      sampling: SAMPLING,
      load_before: loadBefore,
      load_after: loadAfter,
      token_mismatches: mismatches,
      target: TARGET,
      rows: summary,
    },
    null,
    2,
  ),
);
process.exit(0);
