/**
 * The test templates of tests/fixtures/family-templates/ (written for Spindle in each family's
 * conventions) and a tokenizer for each: the byte-level BPE of tiny-hf-tokenizer.ts with the family's
 * own special tokens, so rendered text and token ids line up as they do for the real models.
 */
import { readFileSync } from 'node:fs';
import { HfTokenizer } from '../../src/model/hf-tokenizer.ts';
import { tinyTokenizerJson } from '../model/tiny-hf-tokenizer.ts';

export type Family = 'qwen2.5' | 'qwen3' | 'llama3.1' | 'smollm2';

export function familyTemplate(family: Family): string {
  return readFileSync(new URL(`../fixtures/family-templates/${family}-style.jinja`, import.meta.url), 'utf8');
}

const CHATML = ['<|im_start|>', '<|im_end|>', '<|endoftext|>'];
const SPECIAL_TOKENS: Record<Family, string[]> = {
  'qwen2.5': [...CHATML, '<tool_call>', '</tool_call>'],
  qwen3: [...CHATML, '<tool_call>', '</tool_call>', '<think>', '</think>', '<tool_response>', '</tool_response>'],
  'llama3.1': ['<|begin_of_text|>', '<|end_of_text|>', '<|start_header_id|>', '<|end_header_id|>', '<|eom_id|>', '<|eot_id|>', '<|python_tag|>'],
  smollm2: CHATML,
};

/** The family's tokenizer; `name` becomes its `name_or_path`, as the loader sets it; `template` replaces the family's. */
export function familyTokenizer(family: Family, opts: { name?: string; template?: string } = {}): HfTokenizer {
  const json = tinyTokenizerJson() as { added_tokens: object[] };
  json.added_tokens = SPECIAL_TOKENS[family].map((content, i) => ({ id: 259 + i, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }));
  const llama = family === 'llama3.1';
  return HfTokenizer.fromJson(json, {
    chat_template: opts.template ?? familyTemplate(family),
    eos_token: llama ? '<|eot_id|>' : '<|im_end|>',
    ...(llama ? { bos_token: '<|begin_of_text|>' } : {}),
    name_or_path: opts.name ?? `test/${family}-style`,
  });
}
