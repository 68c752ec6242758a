/**
 * The text the base model's BPE tokenizer is trained on: expert transcripts of the universe's build
 * families and of the shipped environments, played through the real agent loop, one transcript per
 * record, separated by NUL lines (tokenizer.py splits on them). Held-out families are never written.
 *
 *   npx tsx scripts/base-model/corpus.ts [--out <build dir>/corpus.txt] [--per-level 40]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { getEnvironment } from '../../src/envs/registry.ts';
import { ByteTokenizer } from '../../src/tokenizer/byte-tokenizer.ts';
import { deriveSeed } from '../../src/rng.ts';
import { expertTrajectory } from '../../src/rollout/expert.ts';
import type { Environment } from '../../src/envs/types.ts';
import { buildDir } from './build-dir.ts';
import { TRANSCRIPT_MIX } from './mix.ts';
import { BUILD_FAMILIES, worlds } from './universe/index.ts';

const { values: args } = parseArgs({
  options: { out: { type: 'string' }, 'per-level': { type: 'string', default: '40' } },
});
const out = args.out ?? `${buildDir()}/corpus.txt`;
const perLevel = Number(args['per-level']);
const tokenizer = new ByteTokenizer();

async function texts(env: Environment, level: number, count: number): Promise<string[]> {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const t = await expertTrajectory(env, env.generate(deriveSeed(5, env.name, level, i), level, 'train'), {
      tokenizer,
    });
    if (t.success) lines.push(tokenizer.decode(t.tokens));
  }
  return lines;
}

const records: string[] = [];
for (const family of BUILD_FAMILIES) {
  for (const env of worlds(family, 8, 'build')) {
    for (const level of family.levels) records.push(...(await texts(env, level, Math.ceil(perLevel / 8))));
  }
}
for (const { env, level } of TRANSCRIPT_MIX) records.push(...(await texts(getEnvironment(env), level, perLevel)));
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, records.join('\n\u0000\n'));
console.log(`${records.length} transcripts, ${(records.join('').length / 1e6).toFixed(1)} M characters -> ${out}`);
