/**
 * Writes the base model's training data: expert transcripts of the shipped environments played through
 * the real agent loop and QuickJS sandbox (every tool response is real), train split only, as JSONL of
 * token ids with the assistant mask and the copy mask (scripts/lib/copy-mask.ts).
 *
 *   npx tsx scripts/base-model/transcripts.ts [--out models/spindle-base/.build/transcripts.jsonl]
 *
 * Also writes `heldout.jsonl`: the same for test-split items, for the teacher-forced copy accuracy.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { getEnvironment } from '../../src/envs/registry.ts';
import { createRng, deriveSeed } from '../../src/rng.ts';
import { ByteTokenizer } from '../../src/model/byte-tokenizer.ts';
import { expertTrajectory } from '../../src/rollout/expert.ts';
import { copyMask } from './copy-mask.ts';
import { answerTurn } from '../../src/envs/expert-text.ts';
import { DIRECT_ANSWER_SHARE, DIRECT_THOUGHT, TRANSCRIPT_MIX, MAX_TRANSCRIPT_TOKENS } from './mix.ts';

const { values: args } = parseArgs({
  options: {
    out: { type: 'string', default: 'models/spindle-base/.build/transcripts.jsonl' },
    heldout: { type: 'string', default: 'models/spindle-base/.build/heldout.jsonl' },
    'heldout-items': { type: 'string', default: '60' },
    seed: { type: 'string', default: '7' },
  },
});
const SEED = Number(args.seed);
const tokenizer = new ByteTokenizer();

/**
 * `directShare` of the items (train only) get the direct-answer transcript (mix.ts): DIRECT_THOUGHT and
 * the expert's final answer, played through the same loop. The held-out set is tool transcripts only: it measures copying.
 */
async function transcripts(split: 'train' | 'test', perLevel: (items: number) => number, directShare: number): Promise<string[]> {
  const lines: string[] = [];
  for (const { env: name, level, items, copyPractice } of TRANSCRIPT_MIX) {
    const env = getEnvironment(name);
    const want = perLevel(items);
    const pick = createRng(deriveSeed(SEED, split, name, level, 'direct'));
    let kept = 0;
    let direct = 0;
    for (let i = 0; kept < want && i < want * 2; i++) {
      const task = env.generate(deriveSeed(SEED, split, name, level, i), level, split);
      const expert = await expertTrajectory(env, task, { tokenizer });
      if (expert.success !== true || expert.tokens.length > MAX_TRANSCRIPT_TOKENS) continue;
      // Chosen among the items whose tool transcript is kept, so the share holds at every level.
      const answersAtOnce = !copyPractice && pick.chance(directShare);
      const t = answersAtOnce ? await expertTrajectory(env, task, { tokenizer, turns: (turns) => [answerTurn(turns.at(-1)!, DIRECT_THOUGHT)] }) : expert;
      lines.push(JSON.stringify({ env: name, level, direct: answersAtOnce, tokens: t.tokens, assistant: t.assistant_mask, copy: copyMask(t, tokenizer) }));
      kept++;
      if (answersAtOnce) direct++;
    }
    console.log(`  ${split} ${name} L${level}: ${kept} transcripts (${direct} answer without a tool)`);
  }
  return lines;
}

const train = await transcripts('train', (items) => items, DIRECT_ANSWER_SHARE);
mkdirSync(dirname(args.out), { recursive: true });
writeFileSync(args.out, `${train.join('\n')}\n`);
const heldout = await transcripts('test', () => Number(args['heldout-items']), 0);
writeFileSync(args.heldout, `${heldout.join('\n')}\n`);
console.log(`wrote ${train.length} train and ${heldout.length} held-out transcripts`);
