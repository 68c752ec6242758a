/** Writes models/spindle-base/README.md (the model card) from the training settings and the held-out evaluation. */
import { readFileSync, writeFileSync } from 'node:fs';
import { formatEvalTable, type EvalResult } from '../../src/rollout/evaluate.ts';

export interface BaseModelFacts {
  dir: string;
  steps: number;
  batch: number;
  learningRate: number;
  maxTokens: number;
  seed: number;
  mix: { env: string; levels: number[]; items: number }[];
  results: EvalResult[];
  trainSeconds: number | null;
}

export function writeModelCard(facts: BaseModelFacts): void {
  const config = JSON.parse(readFileSync(`${facts.dir}/config.json`, 'utf8')) as Record<string, number | string>;
  const params = readFileSync(`${facts.dir}/model.safetensors`).byteLength / 4;
  const mixRows = facts.mix.map((m) => `| ${m.env} | ${m.levels.join(', ')} | ${m.items} |`).join('\n');
  const card = `---
license: mit
library_name: spindle
tags: [spindle, tool-use, chatml, hermes, tiny]
---
# spindle-base

The policy model Spindle ships: a ${(params / 1e6).toFixed(2)}M-parameter Llama/Qwen2-style decoder (${config.num_hidden_layers} layers,
hidden ${config.hidden_size}, ${config.num_attention_heads} query / ${config.num_key_value_heads} key-value heads, SwiGLU ${config.intermediate_size},
RoPE, RMSNorm, tied embeddings) with Spindle's byte-level tokenizer (256 bytes + ChatML/Hermes special tokens as single ids).

It was trained from scratch by this repository's own code on synthetic expert transcripts of the shipped environments,
played through the real agent loop and QuickJS sandbox (so every tool response in the data is real). It speaks ChatML,
thinks in \`<think>\`, calls tools with \`<tool_call>{"name": …, "arguments": {…}}</tool_call>\`, reads
\`<tool_response>\`, and answers. It is deliberately small and briefly trained: good at the call format, unreliable at
copying numbers and reading tool output — room for GRPO to improve it in the browser.

## Rebuild

\`\`\`sh
npm run model:base -- --steps ${facts.steps}   # resumable; Ctrl-C saves, run again to continue
npm run model:base -- --eval-only              # re-measure and rewrite this card
\`\`\`

Settings: nano preset, AdamW (lr ${facts.learningRate}, 30 warm-up steps, weight decay 0.01, clip 1.0), ${facts.steps} steps of
${facts.batch} transcripts (≤ ${facts.maxTokens} tokens each), assistant-token-only cross-entropy, seed ${facts.seed}, tfjs-wasm on 2 CPU cores${facts.trainSeconds ? ` (${(facts.trainSeconds / 60).toFixed(0)} minutes)` : ''}.

Training transcripts (train split only):

| environment | levels | transcripts |
|---|---|---|
${mixRows}

## Held-out success (test split, greedy decoding, up to 3 turns)

${formatEvalTable(facts.results)}

Success = the environment's own score is 1 (the right answer, reached with a successful tool call where the task needs one).

## Limits

- Not trained on \`js_debug\` (its transcripts are longer than this budget allowed) and only on levels 1–2 elsewhere
  (1–3 for arith_tool): higher levels are out of distribution.
- A byte-level model with a 1024-token context: long tool outputs are cut.
- For teaching and experiments, not for real tasks.
`;
  writeFileSync(`${facts.dir}/README.md`, card);
}
