/**
 * Writes models/spindle-base/tokenizer.json and tokenizer_config.json: the byte tokenizer in the form
 * transformers' AutoTokenizer loads (src/tokenizer/byte-tokenizer-json.ts). Rerun: npx tsx scripts/tokenizer-json.ts
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { byteTokenizerConfig, byteTokenizerJson } from '../src/tokenizer/byte-tokenizer-json.ts';

const dir = join(import.meta.dirname, '..', 'models', 'spindle-base');
writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(byteTokenizerJson(), null, 2) + '\n');
writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify(byteTokenizerConfig(), null, 2) + '\n');
console.log(`wrote ${dir}/tokenizer.json and tokenizer_config.json`);
