/**
 * The base model on what it was not built on (docs/base-model.md): sampled success on the universe's
 * held-out families, on the build families with the held-out wording and on build families in worlds
 * it never saw, and on the README's examples (a user's environment modules and task file). Each set
 * is `--items` distinct test items (spread over 20 worlds for the universe), with its Wilson 95%
 * interval, calls per episode, retry and recovery rates after a failed call, and the best task-blind
 * policy's success on the same kind of items.
 *
 *   npx tsx scripts/base-model/generalization.ts --dir <model folder> [--items 100] [--temperature 1] [--out report.json]
 *                                                [--only "new worlds catalog L1,examples/envs/starter.js"]   (sets whose "name Llevel" contains one)
 *                                                [--dump episodes.jsonl]   (every episode, a line each, to read what the base did)
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Trajectory } from '../../src/contracts.ts';
import { buildEnvironment, environmentSourceFromFile } from '../../src/envs/sources.ts';
import type { Environment } from '../../src/envs/types.ts';
import { initBackend } from '../../src/kernels/backend.ts';
import { loadHfModel } from '../../src/hub/hf.ts';
import { EnginePolicy, GenerationService } from '../../src/pipeline/engine/generation.ts';
import { agentStats } from '../../src/rollout/agent-stats.ts';
import { bestBlindSuccess } from '../../src/rollout/blind-policies.ts';
import { evaluatePolicy } from '../../src/rollout/evaluate.ts';
import { wilsonInterval } from '../../src/rollout/success-interval.ts';
import { BUILD_FAMILIES, HELD_OUT_FAMILIES, worlds } from './universe/index.ts';
import type { Family, Surface } from './universe/world.ts';

const { values: args } = parseArgs({
  options: {
    dir: { type: 'string', default: 'models/spindle-base' },
    items: { type: 'string', default: '100' },
    temperature: { type: 'string', default: '1' },
    'max-steps': { type: 'string', default: '30' },
    out: { type: 'string' },
    only: { type: 'string' },
    dump: { type: 'string' },
  },
});
const ITEMS = Number(args.items);
const WORLDS = 20;
const SEED = 2024;

interface EvalSet {
  name: string;
  envs: Environment[];
  level: number;
}

const universeSets = (
  families: Family<Surface>[],
  kind: string,
  templates: 'build' | 'held_out',
  levels: (f: Family<Surface>) => number[],
): EvalSet[] =>
  families.flatMap((f) =>
    levels(f).map((level) => ({ name: `${kind} ${f.name}`, envs: worlds(f, WORLDS, 'evaluate', templates), level })),
  );

const opened: { close(): void }[] = [];

async function exampleSets(): Promise<EvalSet[]> {
  const files = ['examples/envs/starter.js', 'examples/envs/treasure-hunt.js', 'examples/tasks/word-problems.jsonl'];
  const sets: EvalSet[] = [];
  for (const file of files) {
    const built = await buildEnvironment(await environmentSourceFromFile(readFileSync(file, 'utf8'), file));
    opened.push(built);
    for (const level of built.env.difficulties.slice(0, 2)) sets.push({ name: file, envs: [built.env], level });
  }
  return sets;
}

await initBackend();
const { model, tokenizer } = await loadHfModel(args.dir);
const policy = new EnginePolicy(
  'base',
  tokenizer,
  new GenerationService(() => model, tokenizer, { maxBatch: 16, windowMs: 4 }),
);
const sets = [
  ...universeSets(HELD_OUT_FAMILIES, 'held-out family', 'build', (f) => f.levels),
  ...universeSets(BUILD_FAMILIES, 'held-out wording', 'held_out', () => [1]),
  ...universeSets(BUILD_FAMILIES, 'new worlds', 'build', (f) => f.levels),
  ...(await exampleSets()),
];
const wanted =
  args.only
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean) ?? [];
const chosen = sets.filter((set) => wanted.length === 0 || wanted.some((w) => `${set.name} L${set.level}`.includes(w)));
if (chosen.length === 0)
  throw new Error(
    `--only ${args.only}: no set matches; the sets are ${sets.map((s) => `${s.name} L${s.level}`).join(', ')}`,
  );
if (args.dump) writeFileSync(args.dump, '');
const report = [];
for (const set of chosen) {
  const episodes: Trajectory[] = [];
  const perEnv = Math.ceil(ITEMS / set.envs.length);
  const results = await evaluatePolicy(policy, set.envs, {
    items: perEnv,
    seed: SEED,
    levels: [set.level],
    concurrency: 16,
    maxSteps: Number(args['max-steps']),
    sampling: { temperature: Number(args.temperature) },
    toolTimeoutMs: 15_000,
    onEpisode: (t) => {
      episodes.push(t);
      if (args.dump) appendFileSync(args.dump, `${JSON.stringify({ set: set.name, level: set.level, ...t })}\n`);
    },
  });
  const n = results.reduce((a, r) => a + r.n, 0);
  const k = results.reduce((a, r) => a + Math.round(r.success * r.n), 0);
  const blind = await bestBlindSuccess(set.envs[0], set.level, { items: Math.min(ITEMS, 100), seed: SEED });
  const agent = agentStats(episodes);
  const [lo, hi] = wilsonInterval(k, n);
  const row = {
    set: set.name,
    level: set.level,
    successes: k,
    n,
    ci95: [lo, hi],
    blind: blind.success,
    blind_policy: blind.policy,
    ...agent,
  };
  report.push(row);
  console.log(
    `${set.name} L${set.level}: ${k}/${n} = ${((100 * k) / n).toFixed(0)}% [${(100 * lo).toFixed(0)}, ${(100 * hi).toFixed(0)}] · best blind ${(100 * blind.success).toFixed(0)}% · ${agent.calls_per_episode.toFixed(2)} calls · ${agent.failed_call_episodes} failed-call episodes, retried ${(100 * agent.retry_rate).toFixed(0)}%, recovered ${(100 * agent.recovery_rate).toFixed(0)}%`,
  );
}
if (args.out)
  writeFileSync(
    args.out,
    JSON.stringify({ dir: args.dir, temperature: Number(args.temperature), items: ITEMS, seed: SEED, report }, null, 2),
  );
for (const o of opened) o.close();
