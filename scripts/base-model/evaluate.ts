/**
 * Measures the shipped base model the way GRPO will meet it and writes eval.json (model-card.ts makes the card of it):
 *
 * - teacher-forced accuracy on held-out expert transcripts, on all assistant tokens and on the tokens it
 *   must copy (operands, texts, file names, tool results: scripts/lib/copy-mask.ts), with Spindle's own
 *   forward pass;
 * - sampled success (T = 1, what a GRPO group sees) on level 1 of the four starter environments and on
 *   levels 1–3 of the multi-step ones, with a Wilson 95% interval on distinct items, the best task-blind
 *   policy's success on the same items, calls per episode and the recovery rate after a failed call;
 * - greedy held-out success on level 1 of every environment.
 *
 *   npx tsx scripts/base-model/evaluate.ts [--dir models/spindle-base] [--items 100] [--greedy-items 50] [--max-steps 30]
 *                                          [--sampled env=level,…] [--heldout none] [--out other.json]   (a part, written elsewhere)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../../src/kernels/backend.ts';
import { loadHfModel } from '../../src/hub/hf.ts';
import type { TransformerModel } from '../../src/model/transformer.ts';
import { listEnvironments, getEnvironment } from '../../src/envs/registry.ts';
import { EnginePolicy, GenerationService } from '../../src/pipeline/engine/generation.ts';
import { evaluatePolicy } from '../../src/rollout/evaluate.ts';
import { bestBlindSuccess } from '../../src/rollout/blind-policies.ts';
import { wilsonInterval } from '../../src/rollout/success-interval.ts';
import type { Trajectory } from '../../src/contracts.ts';
import { agentStats } from '../../src/rollout/agent-stats.ts';
import { buildDir } from './build-dir.ts';
import type { CopyAccuracy, EvalFacts, RateRow } from './model-card.ts';

const { values: args } = parseArgs({
  options: {
    dir: { type: 'string', default: 'models/spindle-base' },
    items: { type: 'string', default: '100' },
    'greedy-items': { type: 'string', default: '50' },
    heldout: { type: 'string', default: join(buildDir(), 'heldout.jsonl') },
    'max-steps': { type: 'string', default: '30' },
    out: { type: 'string' },
    sampled: {
      type: 'string',
      default:
        'arith_tool=1,letter_count=1,text_reverse=1,shell_exec=1,file_chain=1,file_chain=2,file_chain=3,order_total=1,order_total=2,order_total=3,func_trace=1,func_trace=2,func_trace=3,clarify_task=1,repo_fix=1,long_plan=1',
    },
  },
});
const ITEMS = Number(args.items);
const GREEDY_ITEMS = Number(args['greedy-items']);

const EVAL_SEED = 2024;
const DIR = args.dir;
/** Turns per episode: 30 by default (the context, 2,048 tokens, is the real bound). */
const MAX_STEPS = Number(args['max-steps']);

interface Row {
  env: string;
  tokens: number[];
  assistant: number[];
  copy: number[];
}

/** Greedy next-token accuracy on assistant and copied tokens, per environment. */
function teacherForced(model: TransformerModel, rows: Row[], padId: number): CopyAccuracy[] {
  const stats = new Map<string, { a: number; an: number; c: number; cn: number }>();
  // Batches of at most 6,000 tokens and 4M attention cells per head (batch × length²): sixteen
  // 1,000-token transcripts, or three of 1,800, overflowed the wasm heap (every layer's scores stay
  // alive until the tidy ends).
  for (let s = 0; s < rows.length;) {
    let size = 0;
    let longest = 0;
    while (s + size < rows.length && size < 16) {
      longest = Math.max(longest, rows[s + size].tokens.length);
      if (size > 0 && ((size + 1) * longest > 6000 || (size + 1) * longest * longest > 4_000_000)) break;
      size++;
    }
    const part = rows.slice(s, s + size);
    s += size;
    const T = Math.max(...part.map((r) => r.tokens.length));
    const ids = part.map((r) => [...r.tokens, ...Array(T - r.tokens.length).fill(padId)]);
    const argmax = tf.tidy(() => model.forward(ids).logits.argMax(-1));
    const predicted = argmax.arraySync() as number[][];
    argmax.dispose();
    part.forEach((r, b) => {
      const e = stats.get(r.env) ?? { a: 0, an: 0, c: 0, cn: 0 };
      for (let t = 1; t < r.tokens.length; t++) {
        const right = predicted[b][t - 1] === r.tokens[t] ? 1 : 0;
        if (r.assistant[t]) {
          e.a += right;
          e.an++;
        }
        if (r.copy[t]) {
          e.c += right;
          e.cn++;
        }
      }
      stats.set(r.env, e);
    });
  }
  return [...stats]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([env, e]) => ({ env, assistant: e.a / e.an, copy: e.c / Math.max(1, e.cn), copyTokens: e.cn }));
}

await initBackend();
const { model, tokenizer } = await loadHfModel(DIR);
const rows =
  args.heldout === 'none'
    ? []
    : readFileSync(args.heldout, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Row);
const copy = teacherForced(model, rows, tokenizer.padId);
for (const c of copy)
  console.log(
    `teacher-forced ${c.env}: assistant ${(100 * c.assistant).toFixed(1)}%, copied tokens ${(100 * c.copy).toFixed(1)}% of ${c.copyTokens}`,
  );

const policy = new EnginePolicy(
  'spindle-base',
  tokenizer,
  new GenerationService(() => model, tokenizer, { maxBatch: 16, windowMs: 4 }),
);
/** A policy error means the engine broke, not that the model failed: such a run must not become a card. */
function refuseBrokenEngine(t: Trajectory): void {
  const broken = t.steps.find((s) => s.observation.startsWith('policy error:'));
  if (broken) throw new Error(`the engine failed during evaluation (${broken.observation}); no card written`);
}

async function rates(rows: { env: string; level: number }[], temperature: number, items: number): Promise<RateRow[]> {
  const out: RateRow[] = [];
  for (const { env: name, level } of rows) {
    const env = getEnvironment(name);
    const episodes: Trajectory[] = [];
    const onEpisode = (t: Trajectory) => {
      refuseBrokenEngine(t);
      episodes.push(t);
    };
    const [r] = await evaluatePolicy(policy, [env], {
      items,
      seed: EVAL_SEED,
      onEpisode,
      levels: [level],
      concurrency: 16,
      maxSteps: MAX_STEPS,
      sampling: { temperature },
      toolTimeoutMs: 15_000,
    });
    const blind = await bestBlindSuccess(env, level, { items, seed: EVAL_SEED });
    const k = Math.round(r.success * r.n);
    const agent = agentStats(episodes);
    out.push({
      env: name,
      level,
      n: r.n,
      successes: k,
      ci95: wilsonInterval(k, r.n),
      blind: blind.success,
      blindPolicy: blind.policy,
      calls: agent.calls_per_episode,
      failedCalls: agent.failed_call_episodes,
      recovery: agent.recovery_rate,
    });
    console.log(
      `${temperature === 0 ? 'greedy' : `T=${temperature}`} ${name} L${level}: ${k}/${r.n} (best task-blind ${(100 * blind.success).toFixed(1)}%), ${agent.calls_per_episode.toFixed(2)} calls per episode, recovered after ${agent.failed_call_episodes} failed calls: ${(100 * agent.recovery_rate).toFixed(0)}%`,
    );
  }
  return out;
}
const sampledRows = String(args.sampled)
  .split(',')
  .map((part) => {
    const [env, level] = part.split('=');
    return { env, level: Number(level ?? 1) };
  });
const sampled = await rates(sampledRows, 1, ITEMS);
const greedy =
  GREEDY_ITEMS > 0
    ? await rates(
        listEnvironments().map((e) => ({ env: e.name, level: 1 })),
        0,
        GREEDY_ITEMS,
      )
    : [];

const facts: EvalFacts & { eval_seed: number } = {
  copy,
  sampled,
  greedy,
  eval_items: ITEMS,
  eval_seed: EVAL_SEED,
  max_steps: MAX_STEPS,
};
const out = args.out ?? `${DIR}/eval.json`;
writeFileSync(out, JSON.stringify(facts, null, 2));
console.log(`wrote ${out}${args.out ? '' : ' (the card stage, model-card.ts, turns it into README.md)'}`);
