/** Writes models/spindle-base/README.md (the model card) from the training settings and the measurements of evaluate.ts. */
import { readFileSync, writeFileSync } from 'node:fs';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import { DIRECT_ANSWER_SHARE, DIRECT_THOUGHT, FINETUNE_SINGLE_STEP_SHARE, GIVE_UP_ANSWER, MULTI_STEP_SHARES, TRANSCRIPT_MIX } from './mix.ts';

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

export interface CardFacts {
  copy: CopyAccuracy[];
  sampled: RateRow[];
  greedy: RateRow[];
  training: Record<string, number | string> | null;
  steps: number | null;
  eval_items: number;
  max_steps: number;
}

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;

/** How these weights were made, beyond the settings below (the run was resumed onto a new mix). */
const BUILD_HISTORY = 'Build history of these weights: 750 steps on levels 1–2 only (copy accuracy stayed near 20%), then 1,350 steps on the\n' +
  'mix with long random texts added, copied tokens weighted 2×, all of it tool transcripts (that model always called its tool, and\n' +
  'GRPO had only its digit-copying left to improve); then 400 steps on the single-step mix, where half the transcripts answer\n' +
  'without a tool (about 85 minutes on 2 CPU cores). Then the multi-step pass, a fine-tune of those weights on the fine-tune mix\n' +
  `(every multi-step transcript and ${Math.round(100 * FINETUNE_SINGLE_STEP_SHARE)}% of the single-step ones, \`finetune.jsonl\`): 800 steps at lr 3e-4 with copied tokens\n` +
  'weighted 3× (`--init` from the single-step weights; sampled success on file_chain level 1 stayed at 0–2%: after the first\n' +
  'observation it answered, as every single-step transcript does), then the settings below from those weights, with the first\n' +
  'token of each assistant turn weighted 5× (`--decision-weight 4`) and fewer early stops, resumed once to stretch it (about\n' +
  '40 minutes on 2 shared CPU cores). That base recovered from none of its failed calls: no transcript showed a call fixed\n' +
  'after its own mistake. Then the recovery pass, 500 steps at lr 3e-4 (copied tokens 3×, first tokens 5×, seed 9) from those\n' +
  'weights on a new fine-tune mix: the `retry`\n' +
  `transcripts (${Math.round(100 * MULTI_STEP_SHARES.retry)}% of the multi-step items: one copied name misspelt, the sandbox's real error, the call made again right;\n` +
  `\`scripts/base-model/typo-retry.ts\`), give-ups after the designed failure down to ${Math.round(100 * MULTI_STEP_SHARES.give_up)}% of those items, and func_trace level 1 doubled\n` +
  '(1000 steps planned, cut to 500 with the cosine schedule recomputed at step 200: about 45 minutes on 2 CPU cores shared with\n' +
  'other work). That base answered func_trace without its tool on half of the items (2% sampled success at level 1): two\n' +
  'builder faults weighed its direct answers, 10% of the transcripts, far above their share. The copy mask marked the "I" of\n' +
  '`I know this.` as copied from prompts that say "It is in …" (weighted 4×; a thought is no longer a copy), and batches drew\n' +
  'short transcripts, the direct answers among them, 2–3× as often as long ones (now every transcript is as likely). Then the\n' +
  'func_trace pass, from those weights on the same mix with both mended and the misspelt call of each retry transcript left\n' +
  'out of the loss (trained on, its typos were imitated: about one js run in three named the wrong function): 300 steps\n' +
  'with 40% of the batches drawn from func_trace transcripts alone (`--focus func_trace=0.4`, lr 2e-4; sampled func_trace\n' +
  'level 1 rose from 2% to 9%), then the settings below (about 20 minutes on 2 CPU cores for both).';

/** Where sampled success sits against the 10–60% band in which a GRPO group has the most spread. */
function bandSentence(rows: RateRow[]): string {
  const name = (r: RateRow) => `${r.env} L${r.level}`;
  const inBand = rows.filter((r) => r.successes / r.n >= 0.1 && r.successes / r.n <= 0.6).map(name);
  const above = rows.filter((r) => r.successes / r.n > 0.6).map(name);
  const parts = [inBand.length ? `Inside the 10–60% band where GRPO groups spread most: ${inBand.join(', ')}.` : 'No environment is inside the 10–60% band where GRPO groups spread most.'];
  if (above.length) parts.push(`Above it: ${above.join(', ')} (train those at a higher level; see \`tasks.levels\`).`);
  return parts.join(' ');
}
/** A Limits line for environments where greedy decoding never succeeds (it answers without the tool there). */
function neverCalls(rows: RateRow[]): string {
  const none = rows.filter((r) => r.successes === 0).map((r) => r.env);
  return none.length ? `\n- Greedy, it succeeds on no test item of ${none.join(', ')} at level 1: there it answers without its tool, or (js_debug) was never trained.` : '';
}
/** A Limits line for environments whose level 1 it never solves when sampled: GRPO has no success there to reinforce. */
function neverSampled(rows: RateRow[]): string {
  const none = rows.filter((r) => r.level === 1 && r.successes === 0).map((r) => r.env);
  return none.length ? `\n- Sampled at T = 1 it solves no level-1 item of ${none.join(', ')}: it miscopies what it read into the next call, or answers at once, so a GRPO group there has no success to reinforce yet.` : '';
}
const rateTable = (rows: RateRow[]): string =>
  ['| environment | level | success (distinct items) | 95% interval | best task-blind | calls per episode | recovered after a failed call |', '|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.env} | ${r.level} | ${r.successes}/${r.n} = ${pct(r.successes / r.n)} | ${pct(r.ci95[0])}–${pct(r.ci95[1])} | ${pct(r.blind)} | ${r.calls.toFixed(2)} | ${r.failedCalls ? `${pct(r.recovery)} of ${r.failedCalls}` : '—'} |`)].join('\n');

export function writeModelCard(dir: string, facts: CardFacts): void {
  const config = JSON.parse(readFileSync(`${dir}/config.json`, 'utf8')) as Record<string, number | string>;
  const params = readFileSync(`${dir}/model.safetensors`).byteLength / 4;
  const t = facts.training ?? {};
  const multiStepShares = `${Math.round(100 * MULTI_STEP_SHARES.direct)}%; ${Math.round(100 * MULTI_STEP_SHARES.early)}% stop early; half the failed-first items give up`;
  const mixRows = TRANSCRIPT_MIX.map((m) => `| ${m.env} | ${m.level} | ${m.items} | ${m.copyPractice ? 'none (copy practice)' : m.multiStep ? multiStepShares : `${Math.round(100 * DIRECT_ANSWER_SHARE)}%`} |`).join('\n');
  const copyRows = facts.copy.map((c) => `| ${c.env} | ${pct(c.assistant)} | ${pct(c.copy)} | ${c.copyTokens} |`).join('\n');
  const card = `---
license: mit
library_name: spindle
tags: [spindle, tool-use, chatml, hermes, tiny]
---
# spindle-base

The policy model Spindle ships: a ${(params / 1e6).toFixed(2)}M-parameter Llama-style decoder (${config.num_hidden_layers} layers,
hidden ${config.hidden_size}, ${config.num_attention_heads} query / ${config.num_key_value_heads} key-value heads, SwiGLU ${config.intermediate_size},
RoPE, RMSNorm, tied embeddings) with Spindle's byte-level tokenizer (256 bytes + ChatML/Hermes special tokens as single ids).

It was trained from scratch on expert transcripts of the shipped environments, played by Spindle's own experts through
the real agent loop and QuickJS sandbox (every tool response in the data is real), train split only. It speaks ChatML,
thinks in \`<think>\`, calls tools with \`<tool_call>{"name": …, "arguments": {…}}</tool_call>\`, reads
\`<tool_response>\`, and answers. The data is copy-heavy on purpose: what it must learn is to carry the question's
operands, text or file name into the call and the call's result into the answer. ${Math.round(100 * DIRECT_ANSWER_SHARE)}% of its transcripts (none of
the long-text copy practice) answer at once without a tool (\`<think>${DIRECT_THOUGHT}</think>\` and the answer), as a chat
model does before it has learned its tools; every environment scores that a failure. So the base calls its tool on some
questions and not on others, and sampled at T = 1 it succeeds sometimes, not always: what gives GRPO groups a
spread to learn from, and what GRPO learns first, is the decision to use the tool.

It also acts in several steps (file_chain, order_total, func_trace: a file name, a price or a function read in one
call is what the next call needs) and fails the way agents fail: its multi-step transcripts (all of them following
the real sandbox) include episodes that stop after one of their reads and answer with what it showed, the
intermediate value, and, on items built so that the first attempt fails, episodes that answer "${GIVE_UP_ANSWER}" right
after the error instead of finding the file or function it named, and episodes that misspell a name they copied (a
file, the function they run), read the sandbox's error and make the call again, right. Sampled, it sometimes carries on
to the end and sometimes stops, miscopies what it read or gives up after an error: what GRPO has to teach it is to keep
going, and to retry.

## Measured (\`scripts/base-model/evaluate.ts\`, test split)

Teacher-forced on held-out expert transcripts (Spindle's forward pass, greedy next token):

| environment | assistant tokens | copied tokens | copied tokens counted |
|---|---|---|---|
${copyRows}

Sampled success at T = 1 (what a GRPO group sees), ${facts.eval_items} distinct test items (fewer where a level has fewer), up to ${facts.max_steps} turns:

${rateTable(facts.sampled)}

Greedy success, level 1 of every environment (${facts.greedy[0]?.n ?? 0} test items each):

${rateTable(facts.greedy)}

Success = the environment's own score is 1: the exact answer, and a tool call that did the work where the
environment needs one. "Best task-blind" is the best of the policies in \`src/rollout/blind-policies.ts\` (constants,
the most common answer, echoes of the question, junk calls) on the same items. Episodes allow ${DEFAULT_CONFIG.sampling.max_new_tokens} new tokens per turn
(the run default). ${bandSentence(facts.sampled)}

${BUILD_HISTORY}

## Rebuild

\`\`\`sh
npx tsx scripts/base-model/transcripts.ts && /usr/bin/python3 scripts/base-model/train.py && npx tsx scripts/base-model/evaluate.ts --heldout models/spindle-base/.build/heldout.jsonl --max-steps 8
\`\`\`

(The byte build's stages with their defaults; \`npm run model:base\` now builds its successor, a BPE base, docs/base-model.md.
The mix's shares in \`scripts/base-model/mix.ts\` have since changed for that build: git history has the byte build's.)

A pass on top of existing weights is \`train.py --data models/spindle-base/.build/finetune.jsonl --init <weights>\`
with the settings below (\`--focus ENV=SHARE\` draws that share of the batches from one environment's transcripts), then
\`scripts/base-model/evaluate.ts\`.

Steps: \`scripts/base-model/transcripts.ts\` writes the expert transcripts (JSONL of token ids, assistant mask, copy mask);
\`scripts/base-model/train.py\` trains (PyTorch CPU is only the builder: same formulas as \`src/model/transformer.ts\`,
written as float32 safetensors in the HF layout, with \`reference-logits.json\` that \`tests/model/shipped-model.test.ts\`
checks Spindle's forward against); \`scripts/base-model/evaluate.ts\` measures and writes this card.

Settings: ${facts.steps ?? '?'} steps of ${t.batch ?? '?'} transcripts, AdamW (lr ${t.lr ?? '?'}, ${t.warmup ?? '?'} warm-up steps, cosine to 10%,
weight decay 0.01, clip 1.0), loss on assistant tokens with copied tokens weighted ${1 + Number(t.copy_weight ?? 0)}× and the first token of each turn ${1 + Number(t.decision_weight ?? 0)}×, seed ${t.seed ?? '?'}${t.focus ? `, ${t.focus} (\`--focus\`)` : ''}.

Training transcripts (train split only; items drawn per level, of which those longer than the context budget are dropped):

| environment | level | items | answered without a tool (and other failures) |
|---|---|---|---|
${mixRows}

## Limits

- Trained on levels 1–2 (1–3 for arith_tool, 1 for countdown and git_repo) and not on js_debug: other levels are out of distribution.
- A byte-level model with a 1024-token context: long tool outputs are cut, and an episode holds about 5–7 turns
  (a turn with its call and observation is 120–190 tokens), which bounds \`max_steps_per_trajectory\` for this model,
  not the loop (it allows up to 100); a turn that finds the context full ends the episode as out of tokens.
- Multi-step environments were trained at levels 1–3 only.${neverCalls(facts.greedy)}${neverSampled(facts.sampled)}
- For teaching and experiments, not for real tasks.
`;
  writeFileSync(`${dir}/README.md`, card);
}
