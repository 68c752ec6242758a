/**
 * Chat rows for the transformers check of a packaged base (hf_check.py): expert episodes of the shipped
 * environments and of universe worlds, played with the folder's own tokenizer as a run plays them, each
 * exported as Spindle exports a chat row for that model (trajectoryToChatRow with the folder's template),
 * with the token ids and assistant mask the episode trained on.
 *
 *   npx tsx scripts/base-model/interop-rows.ts --dir <model folder> --out <rows.jsonl> [--per-level 4]
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { getEnvironment } from '../../src/envs/registry.ts';
import type { Environment } from '../../src/envs/types.ts';
import { trajectoryToChatRow } from '../../src/export/hf-chat.ts';
import { ChatTemplate } from '../../src/format/chat-template.ts';
import { initBackend } from '../../src/kernels/backend.ts';
import { loadHfModel } from '../../src/hub/hf.ts';
import type { HfTokenizer } from '../../src/tokenizer/hf-tokenizer.ts';
import { deriveSeed } from '../../src/rng.ts';
import { expertTrajectory } from '../../src/rollout/expert.ts';
import { BUILD_FAMILIES, HELD_OUT_FAMILIES, worlds } from './universe/index.ts';

const { values: args } = parseArgs({
  options: { dir: { type: 'string' }, out: { type: 'string' }, 'per-level': { type: 'string', default: '4' } },
});
if (!args.dir || !args.out) throw new Error('--dir <model folder> and --out <rows.jsonl> are required');
await initBackend();
const { model, tokenizer } = await loadHfModel(args.dir);
model.dispose();
const hf = tokenizer as HfTokenizer;
const template = ChatTemplate.fromTokenizerConfig(hf.configJson, {
  tools: true,
  hasToken: (t) => hf.tokenToId(t) !== undefined,
});
if (!template) throw new Error(`${args.dir} has no chat template`);

const sets: { env: Environment; levels: number[] }[] = [
  ...['arith_tool', 'letter_count', 'shell_exec', 'file_chain', 'order_total', 'func_trace', 'git_repo'].map((name) => {
    const env = getEnvironment(name);
    return { env, levels: env.difficulties.slice(0, 3) };
  }),
  ...[...BUILD_FAMILIES, ...HELD_OUT_FAMILIES].map((f) => ({ env: worlds(f, 1, 'evaluate')[0], levels: f.levels })),
];
const lines: string[] = [];
for (const { env, levels } of sets) {
  for (const level of levels) {
    for (let i = 0; i < Number(args['per-level']); i++) {
      const t = await expertTrajectory(env, env.generate(deriveSeed(11, env.name, level, i), level, 'test'), {
        tokenizer,
        maxSteps: 30,
      });
      const row = trajectoryToChatRow(t, { model: { template, tokenizer } });
      lines.push(
        JSON.stringify({
          env: env.name,
          level,
          messages: row.messages,
          tools: row.tools,
          tokens: t.tokens,
          assistant_mask: t.assistant_mask,
        }),
      );
    }
  }
}
writeFileSync(args.out, `${lines.join('\n')}\n`);
console.log(`${lines.length} rows -> ${args.out}`);
