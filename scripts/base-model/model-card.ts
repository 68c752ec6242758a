/**
 * Writes the model card (README.md in the model folder) from what the build measured: the shape and the
 * tokenizer (config.json, tokenizer.json), tokens per turn on the held-out transcripts, the training
 * settings (`.build/train-log.json`), the shipped environments (eval.json, from evaluate.ts) and what the
 * base was not built on (generalization.json, from generalization.ts).
 *
 *   npx tsx scripts/base-model/model-card.ts --dir <model folder> --heldout <build>/heldout.jsonl
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import { HfTokenizer } from '../../src/tokenizer/hf-tokenizer.ts';
import { COPY_DRILL_ITEMS, GIVE_UP_ANSWER, MULTI_STEP_SHARES, TRANSCRIPT_MIX, UNIVERSE_MIX } from './mix.ts';
import { BUILD_FAMILIES, HELD_OUT_FAMILIES } from './universe/index.ts';

export interface CopyAccuracy {
  env: string;
  /** Greedy next-token accuracy on all assistant tokens. */
  assistant: number;
  /** The same on the tokens the model must copy. */
  copy: number;
  copyTokens: number;
}

export interface RateRow {
  env: string;
  level: number;
  n: number;
  successes: number;
  ci95: [number, number];
  /** The best task-blind policy's success on the same items. */
  blind: number;
  blindPolicy: string;
  /** Tool calls per episode, episodes with a failed call, and the share of those that still succeeded. */
  calls: number;
  failedCalls: number;
  recovery: number;
}

/** What evaluate.ts writes to eval.json. */
export interface EvalFacts {
  copy: CopyAccuracy[];
  sampled: RateRow[];
  greedy: RateRow[];
  eval_items: number;
  max_steps: number;
}

/** One row of generalization.json (generalization.ts). */
interface GeneralizationRow {
  set: string;
  level: number;
  successes: number;
  n: number;
  ci95: [number, number];
  blind: number;
  calls_per_episode: number;
  failed_call_episodes: number;
  recovery_rate: number;
}

const pct = (x: number): string => `${(100 * x).toFixed(0)}%`;
const rate = (k: number, n: number, ci: [number, number]): string =>
  `${k}/${n} = ${pct(k / n)} | ${pct(ci[0])}–${pct(ci[1])}`;

const rateTable = (rows: RateRow[]): string =>
  [
    '| environment | level | success (distinct items) | 95% interval | best task-blind | calls per episode | recovered after a failed call |',
    '|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.env} | ${r.level} | ${rate(r.successes, r.n, r.ci95)} | ${pct(r.blind)} | ${r.calls.toFixed(2)} | ${r.failedCalls ? `${pct(r.recovery)} of ${r.failedCalls}` : '—'} |`,
    ),
  ].join('\n');

const generalizationTable = (rows: GeneralizationRow[]): string =>
  [
    '| set | level | success (distinct items) | 95% interval | best task-blind | calls per episode | recovered after a failed call |',
    '|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.set} | ${r.level} | ${rate(r.successes, r.n, r.ci95)} | ${pct(r.blind)} | ${r.calls_per_episode.toFixed(2)} | ${r.failed_call_episodes ? `${pct(r.recovery_rate)} of ${r.failed_call_episodes}` : '—'} |`,
    ),
  ].join('\n');

/** Where sampled success sits against the 10–60% band in which a GRPO group has the most spread. */
function bandSentence(rows: { name: string; successes: number; n: number }[]): string {
  const inBand = rows.filter((r) => r.successes / r.n >= 0.1 && r.successes / r.n <= 0.6).map((r) => r.name);
  const above = rows.filter((r) => r.successes / r.n > 0.6).map((r) => r.name);
  const below = rows.filter((r) => r.successes / r.n < 0.1).map((r) => r.name);
  return [
    inBand.length
      ? `Inside the 10–60% band where GRPO groups spread most: ${inBand.join(', ')}.`
      : 'No set is inside the 10–60% band where GRPO groups spread most.',
    above.length ? `Above it: ${above.join(', ')} (train those at a higher level; see \`tasks.levels\`).` : '',
    below.length ? `Below it: ${below.join(', ')}: a GRPO group there rarely holds a success to reinforce.` : '',
  ]
    .filter(Boolean)
    .join(' ');
}

/** Tokens per assistant turn (its call and the observation that follows) in held-out multi-step transcripts. */
function tokensPerTurn(
  heldoutPath: string,
  tokenizer: HfTokenizer,
): { median: number; p90: number; turns: number } | null {
  if (!existsSync(heldoutPath)) return null;
  const marker = tokenizer.encode('<|im_start|>assistant');
  const lengths: number[] = [];
  for (const line of readFileSync(heldoutPath, 'utf8').split('\n').filter(Boolean)) {
    const { tokens } = JSON.parse(line) as { tokens: number[] };
    const starts = tokens.flatMap((_, i) => (marker.every((m, j) => tokens[i + j] === m) ? [i] : []));
    // A turn that called a tool runs to the next assistant turn; the last turn (the answer) is not counted.
    for (let i = 1; i < starts.length; i++) lengths.push(starts[i] - starts[i - 1]);
  }
  if (lengths.length === 0) return null;
  lengths.sort((a, b) => a - b);
  return {
    median: lengths[Math.floor(lengths.length / 2)],
    p90: lengths[Math.floor(lengths.length * 0.9)],
    turns: lengths.length,
  };
}

export function writeModelCard(dir: string, heldoutPath: string): void {
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, number>;
  const tokenizerJson = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8')) as {
    model: { vocab: Record<string, number> };
    added_tokens: { content: string }[];
  };
  const tokenizer = HfTokenizer.fromJson(tokenizerJson, { eos_token: '<|endoftext|>', pad_token: '<|pad|>' });
  const params = readFileSync(join(dir, 'model.safetensors')).byteLength / 4;
  const evalFacts = JSON.parse(readFileSync(join(dir, 'eval.json'), 'utf8')) as EvalFacts;
  const general = existsSync(join(dir, 'generalization.json'))
    ? (JSON.parse(readFileSync(join(dir, 'generalization.json'), 'utf8')) as {
        items: number;
        report: GeneralizationRow[];
      })
    : null;
  const log = existsSync(join(dir, '.build/train-log.json'))
    ? (JSON.parse(readFileSync(join(dir, '.build/train-log.json'), 'utf8')) as {
        args: Record<string, number | string>;
        log: { step: number }[];
      })
    : null;
  const t = log?.args ?? {};
  const turn = tokensPerTurn(heldoutPath, tokenizer);
  const context = config.max_position_embeddings;
  const special = tokenizerJson.added_tokens.map((a) => `\`${a.content}\``).join(' ');
  const mixRows = TRANSCRIPT_MIX.map((m) => `| ${m.env} | ${m.level} | ${m.items} |`).join('\n');
  const sampledBand = evalFacts.sampled.map((r) => ({ name: `${r.env} L${r.level}`, successes: r.successes, n: r.n }));
  const generalBand = (general?.report ?? []).map((r) => ({
    name: `${r.set} L${r.level}`,
    successes: r.successes,
    n: r.n,
  }));
  const card = `---
license: mit
library_name: spindle
tags: [spindle, tool-use, chatml, hermes, tiny]
---
# spindle-base

The policy model Spindle ships: a ${(params / 1e6).toFixed(2)}M-parameter Llama-style decoder (${config.num_hidden_layers} layers,
hidden ${config.hidden_size}, ${config.num_attention_heads} query / ${config.num_key_value_heads} key-value heads, SwiGLU ${config.intermediate_size},
RoPE, RMSNorm, tied embeddings, a ${context}-token context) with a byte-level BPE tokenizer of ${tokenizer.vocabSize} tokens built
for it: every space and every digit is a token of its own (a name is the same ids wherever it appears), any text encodes, and the chat and tool markers are single tokens (${special}).
${
  turn
    ? `A tool-calling turn of the multi-step environments (its call and the observation that follows) is ${turn.median} tokens at the median and
${turn.p90} at the 90th percentile (${turn.turns} held-out turns), so the context holds about ${Math.floor(context / turn.median)} such turns: the context, not the
loop, bounds an episode (\`max_steps_per_trajectory\` allows up to 100).`
    : ''
}

${t.init ? `It was fine-tuned for ${t.steps} steps (peak learning rate ${t.lr}) from an earlier build of the same shape and tokenizer, itself trained from scratch; both on expert transcripts` : 'It was trained from scratch on expert transcripts'} played by Spindle's own experts through the real agent loop and
QuickJS sandbox (every tool response in the data is real), train split only: a procedural universe of tool worlds
(${BUILD_FAMILIES.map((f) => f.name).join(', ')}; ${UNIVERSE_MIX.worlds} worlds each, every world with its own generated tool names, descriptions and
parameter names, presented as a user environment's tools are), the copy drill (lists of names and letter strings
repeated back, ${COPY_DRILL_ITEMS} items a level) and the shipped environments. It speaks ChatML, thinks
in \`<think>\`, calls tools with \`<tool_call>{"name": …, "arguments": {…}}</tool_call>\`, reads \`<tool_response>\`, and answers.

Its multi-step transcripts fail the way agents fail, on purpose, so that a GRPO group holds both kinds: ${pct(MULTI_STEP_SHARES.early)} stop after one of their reads and
answer with what it showed, ${pct(MULTI_STEP_SHARES.retry)} misspell a name (a tool's, or one they copied), read the real error and make the call again, right,
and ${pct(MULTI_STEP_SHARES.give_up)} of the items built to fail first answer "${GIVE_UP_ANSWER}" after the error.

## Measured on the shipped environments (\`scripts/base-model/evaluate.ts\`, test split)

Teacher-forced on held-out expert transcripts (Spindle's forward pass, greedy next token):

| environment | assistant tokens | copied tokens | copied tokens counted |
|---|---|---|---|
${evalFacts.copy.map((c) => `| ${c.env} | ${pct(c.assistant)} | ${pct(c.copy)} | ${c.copyTokens} |`).join('\n')}

Sampled at T = 1 (what a GRPO group sees), ${evalFacts.eval_items} distinct test items (fewer where a level has fewer), up to ${evalFacts.max_steps} turns:

${rateTable(evalFacts.sampled)}

${bandSentence(sampledBand)}

Greedy, level 1 of every environment (${evalFacts.greedy[0]?.n ?? 0} test items each):

${rateTable(evalFacts.greedy)}

## Measured on what it was not built on (\`scripts/base-model/generalization.ts\`)

${
  general
    ? `Sampled at T = 1, ${general.items} distinct test items per set: the held-out families (${HELD_OUT_FAMILIES.map((f) => f.name).join(', ')}: tools, wording and
errors the build never saw), the build families in the held-out task wording, the build families in worlds whose names
and descriptions were never trained on, and the README's examples (a user's environment modules and task file).

${generalizationTable(general.report)}

${bandSentence(generalBand)}`
    : 'Not measured for these weights.'
}

Success = the environment's own score is 1: the exact answer, and a tool call that did the work where the environment
needs one. "Best task-blind" is the best of the policies in \`src/rollout/blind-policies.ts\` (constants, the most common
answer, echoes of the question, junk calls) on the same items. Episodes allow ${DEFAULT_CONFIG.sampling.max_new_tokens} new tokens per turn (the run default).

## Build

\`npm run model:base\` builds it on 2 CPU cores in about two hours, resumable stage by stage (\`docs/base-model.md\`):
PyTorch is only the builder (the same formulas as \`src/model/transformer.ts\`, written as float32 safetensors in the HF
layout, with \`reference-logits.json\` that \`tests/model/shipped-model.test.ts\` checks Spindle's forward against).

Settings: ${log?.log.at(-1)?.step ?? '?'} steps of ${t.batch ?? '?'} transcripts packed to about 4,096 tokens, AdamW (lr ${t.lr ?? '?'}, ${t.warmup ?? '?'} warm-up steps,
cosine to 10%, weight decay 0.01, clip 1.0), loss on assistant tokens with copied tokens weighted ${1 + Number(t.copy_weight ?? 0)}×, seed ${t.seed ?? '?'}.

The shipped environments' share of the training transcripts (items per level; the universe adds
${UNIVERSE_MIX.itemsPerLevel} items per level of every build family):

| environment | level | items |
|---|---|---|
${mixRows}

## Limits

- For teaching and experiments, not for real tasks.
- Levels and families outside the tables above are out of distribution; a sampled rate below 10% means GRPO starts
  there with almost nothing to reinforce.
- Long tool outputs fill the ${context}-token context; a turn that finds it full ends the episode as out of tokens.
`;
  writeFileSync(join(dir, 'README.md'), card);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values: args } = parseArgs({
    options: { dir: { type: 'string', default: 'models/spindle-base' }, heldout: { type: 'string', default: '' } },
  });
  writeModelCard(String(args.dir), String(args.heldout));
  console.log(`wrote ${args.dir}/README.md`);
}
