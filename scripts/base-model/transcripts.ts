/**
 * Writes the base model's training data: expert transcripts of the shipped environments played through
 * the real agent loop and QuickJS sandbox (every tool response is real), train split only, as JSONL of
 * token ids with the assistant mask and the copy mask (scripts/lib/copy-mask.ts).
 *
 *   npx tsx scripts/base-model/transcripts.ts [--out models/spindle-base/.build/transcripts.jsonl]
 *
 * With `--universe`, the build families of the procedural tool universe (universe/, docs/base-model.md)
 * join the mix as multi-step rows, each family over many worlds, with the copy drill (universe/copy-drill.ts); `--tokenizer` encodes with a built BPE
 * tokenizer.json instead of the byte tokenizer, and `--context` bounds a transcript's tokens.
 *
 * Also writes `heldout.jsonl`: the same for test-split items, for the teacher-forced copy accuracy.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { getEnvironment } from '../../src/envs/registry.ts';
import { createRng, deriveSeed } from '../../src/rng.ts';
import { ByteTokenizer } from '../../src/tokenizer/byte-tokenizer.ts';
import { HfTokenizer } from '../../src/tokenizer/hf-tokenizer.ts';
import type { TextTokenizer } from '../../src/tokenizer/tokenizer.ts';
import type { Environment } from '../../src/envs/types.ts';
import { BUILD_FAMILIES, worlds } from './universe/index.ts';
import { copyDrill } from './universe/copy-drill.ts';
import { expertTrajectory } from '../../src/rollout/expert.ts';
import { copyMask } from './copy-mask.ts';
import { answerTurn } from '../../src/envs/expert-text.ts';
import { maskTypoTurn, RETRY_THOUGHT, withTypoRetry } from './typo-retry.ts';
import {
  COPY_DRILL_ITEMS,
  FINETUNE_SINGLE_STEP_SHARE,
  GIVE_UP_ANSWER,
  MAX_MULTI_STEP_TOKENS,
  MULTI_STEP_SHARES,
  TRANSCRIPT_MIX,
  MAX_TRANSCRIPT_TOKENS,
  UNIVERSE_MIX,
} from './mix.ts';
import type { Rng } from '../../src/rng.ts';
import type { Trajectory } from '../../src/contracts.ts';

const { values: args } = parseArgs({
  options: {
    out: { type: 'string', default: 'models/spindle-base/.build/transcripts.jsonl' },
    finetune: { type: 'string', default: 'models/spindle-base/.build/finetune.jsonl' },
    heldout: { type: 'string', default: 'models/spindle-base/.build/heldout.jsonl' },
    'heldout-items': { type: 'string', default: '60' },
    seed: { type: 'string', default: '7' },
    universe: { type: 'boolean', default: false },
    tokenizer: { type: 'string' },
    context: { type: 'string', default: '1024' },
  },
});
const SEED = Number(args.seed);
const tokenizer: TextTokenizer = args.tokenizer
  ? HfTokenizer.fromJson(JSON.parse(readFileSync(args.tokenizer, 'utf8')), {
      eos_token: '<|endoftext|>',
      pad_token: '<|pad|>',
    })
  : new ByteTokenizer();
/** The longest multi-step transcript kept: the byte build's bound, or a BPE build's context less room for a longer answer. */
const maxMultiStepTokens = args.tokenizer ? Number(args.context) - 24 : MAX_MULTI_STEP_TOKENS;

interface MixRow {
  /** What the transcript's `env` field and the progress lines say (a universe row: its family). */
  label: string;
  env: Environment;
  level: number;
  items: number;
  /** The share of its label's items this row holds (a universe world: one of many). */
  share: number;
  copyPractice?: true;
  multiStep?: true;
  /** A universe row's world, by index among its family's build worlds. */
  world?: number;
}

function mixRows(): MixRow[] {
  const rows: MixRow[] = TRANSCRIPT_MIX.map((r) => ({ ...r, label: r.env, env: getEnvironment(r.env), share: 1 }));
  if (!args.universe) return rows;
  for (const level of copyDrill.difficulties)
    rows.push({ label: copyDrill.name, env: copyDrill, level, items: COPY_DRILL_ITEMS, share: 1, copyPractice: true });
  for (const family of BUILD_FAMILIES) {
    for (const [world, env] of worlds(family, UNIVERSE_MIX.worlds, 'build').entries()) {
      for (const level of family.levels) {
        const items = Math.ceil(UNIVERSE_MIX.itemsPerLevel / UNIVERSE_MIX.worlds);
        rows.push({
          label: `u_${family.name}`,
          env,
          level,
          items,
          share: 1 / UNIVERSE_MIX.worlds,
          multiStep: true,
          world,
        });
      }
    }
  }
  return rows;
}

type Variant = 'expert' | 'early' | 'retry' | 'give_up';

/**
 * The variant a train item is played as: single-step items as the expert; multi-step items also stop
 * early, fix a typo on the next turn, or give up after the designed failure (MULTI_STEP_SHARES). The
 * held-out set (`variants` false) is expert transcripts only: it measures copying.
 */
function chooseVariant(
  pick: Rng,
  expert: Trajectory,
  row: { copyPractice?: true; multiStep?: true },
  variants: boolean,
): Variant {
  if (row.copyPractice || !row.multiStep || !variants) return 'expert';
  const r = pick.next();
  if (r < MULTI_STEP_SHARES.early && expert.steps.length >= 2) return 'early';
  if (r < MULTI_STEP_SHARES.early + MULTI_STEP_SHARES.retry) return 'retry';
  if (expert.steps.some((s) => s.tool_call?.error) && pick.chance(MULTI_STEP_SHARES.give_up)) return 'give_up';
  return 'expert';
}

/** The assistant turns of a variant, from the expert's turns and what its episode observed (one call per turn). */
function variantTurns(variant: Variant, expert: Trajectory, turns: string[], pick: Rng): string[] {
  if (variant === 'early') {
    const k = pick.int(1, expert.steps.length - 1);
    const seen = expert.steps[k - 1].observation.trim().split(/\s+/).at(-1) ?? '';
    return [...turns.slice(0, k), answerTurn(seen)];
  }
  if (variant === 'retry') return withTypoRetry(turns, pick) ?? turns;
  if (variant === 'give_up')
    return [...turns.slice(0, expert.steps.findIndex((s) => s.tool_call?.error) + 1), answerTurn(GIVE_UP_ANSWER)];
  return turns;
}

async function transcripts(
  split: 'train' | 'test',
  perLevel: (row: MixRow) => number,
  variants: boolean,
): Promise<string[]> {
  const lines: string[] = [];
  const progress = new Map<string, Record<Variant, number>>();
  for (const row of mixRows()) {
    const { env, label, level, multiStep } = row;
    const want = perLevel(row);
    const pick = createRng(deriveSeed(SEED, split, env.name, level, 'direct'));
    const maxTokens = multiStep ? maxMultiStepTokens : MAX_TRANSCRIPT_TOKENS;
    const counts = progress.get(`${label} L${level}`) ?? { expert: 0, early: 0, retry: 0, give_up: 0 };
    progress.set(`${label} L${level}`, counts);
    let kept = 0;
    for (let i = 0; kept < want && i < want * 2; i++) {
      const task = env.generate(deriveSeed(SEED, split, env.name, level, i), level, split);
      const expert = await expertTrajectory(env, task, { tokenizer });
      if (expert.success !== true || expert.tokens.length > maxTokens) continue;
      // Chosen among the items whose tool transcript is kept, so the shares hold at every level.
      let variant = chooseVariant(pick, expert, row, variants);
      let t =
        variant === 'expert'
          ? expert
          : await expertTrajectory(env, task, {
              tokenizer,
              turns: (turns) => variantTurns(variant, expert, turns, pick),
            });
      // A typo that did not fail (or a retry that did not end in success) teaches nothing about recovery.
      const typoFixed =
        t.success === true &&
        t.steps.some((s) => s.tool_call?.error) &&
        t.steps.some((s) => s.thought === RETRY_THOUGHT);
      if (variant === 'retry' && !typoFixed) {
        variant = 'expert';
        t = expert;
      }
      const assistant = variant === 'retry' ? maskTypoTurn(t) : t.assistant_mask;
      lines.push(
        JSON.stringify({ env: label, level, variant, tokens: t.tokens, assistant, copy: copyMask(t, tokenizer) }),
      );
      kept++;
      counts[variant]++;
    }
  }
  for (const [what, counts] of progress) {
    const n = Object.values(counts).reduce((a, b) => a + b, 0);
    console.log(
      `  ${split} ${what}: ${n} transcripts (${
        Object.entries(counts)
          .filter(([v, k]) => v !== 'expert' && k > 0)
          .map(([v, k]) => `${k} ${v}`)
          .join(', ') || 'all expert'
      })`,
    );
  }
  return lines;
}

const train = await transcripts('train', (row) => row.items, true);
mkdirSync(dirname(args.out), { recursive: true });
writeFileSync(args.out, `${train.join('\n')}\n`);
// The fine-tune mix (the multi-step pass of the build, see the card): every multi-step transcript and a
// share of the single-step ones, so the weights keep what they knew while most steps teach chaining.
const keep = createRng(deriveSeed(SEED, 'finetune'));
const multiStepEnvs = new Set(TRANSCRIPT_MIX.filter((r) => r.multiStep).map((r) => r.env));
const finetune = train.filter(
  (line) => multiStepEnvs.has((JSON.parse(line) as { env: string }).env) || keep.chance(FINETUNE_SINGLE_STEP_SHARE),
);
writeFileSync(args.finetune, `${finetune.join('\n')}\n`);
// A universe family's held-out transcripts come from its first worlds, one item each, however many worlds the mix has.
const heldoutItems = Number(args['heldout-items']);
const heldout = await transcripts(
  'test',
  (row) =>
    row.world === undefined
      ? Math.ceil(heldoutItems * row.share)
      : row.world < heldoutItems
        ? Math.ceil(heldoutItems * row.share)
        : 0,
  false,
);
writeFileSync(args.heldout, `${heldout.join('\n')}\n`);
console.log(
  `wrote ${train.length} train (${finetune.length} in the fine-tune mix) and ${heldout.length} held-out transcripts`,
);
