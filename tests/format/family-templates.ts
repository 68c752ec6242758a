/**
 * The test templates of tests/fixtures/family-templates/ (written for Spindle in each family's
 * conventions) and a tokenizer for each: the byte-level BPE of tiny-hf-tokenizer.ts with the family's
 * own special tokens, so rendered text and token ids line up as they do for the real models.
 */
import { readFileSync } from 'node:fs';
import { HfTokenizer } from '../../src/tokenizer/hf-tokenizer.ts';
import { tinyTokenizerJson } from '../tokenizer/tiny-hf-tokenizer.ts';

export type Family =
  | 'qwen2.5'
  | 'qwen3'
  | 'llama3.1'
  | 'smollm2'
  | 'mistral'
  | 'qwen3-coder'
  | 'functiongemma'
  | 'phi4-mini'
  | 'smollm3'
  | 'deepseek'
  | 'gpt-oss';

export function familyTemplate(family: Family): string {
  return readFileSync(new URL(`../fixtures/family-templates/${family}-style.jinja`, import.meta.url), 'utf8');
}

const CHATML = ['<|im_start|>', '<|im_end|>', '<|endoftext|>'];

interface FamilyTokens {
  special: string[];
  /** tokenizer_config.json's eos_token: the token the family ends an assistant turn with. */
  eos: string;
  bos?: string;
}

const DEEPSEEK_TOOLS = [
  '<｜tool▁calls▁begin｜>',
  '<｜tool▁calls▁end｜>',
  '<｜tool▁call▁begin｜>',
  '<｜tool▁call▁end｜>',
  '<｜tool▁sep｜>',
  '<｜tool▁outputs▁begin｜>',
  '<｜tool▁outputs▁end｜>',
  '<｜tool▁output▁begin｜>',
  '<｜tool▁output▁end｜>',
];

const TOKENS: Record<Family, FamilyTokens> = {
  'qwen2.5': { special: [...CHATML, '<tool_call>', '</tool_call>'], eos: '<|im_end|>' },
  qwen3: {
    special: [...CHATML, '<tool_call>', '</tool_call>', '<think>', '</think>', '<tool_response>', '</tool_response>'],
    eos: '<|im_end|>',
  },
  'llama3.1': {
    special: [
      '<|begin_of_text|>',
      '<|end_of_text|>',
      '<|start_header_id|>',
      '<|end_header_id|>',
      '<|eom_id|>',
      '<|eot_id|>',
      '<|python_tag|>',
    ],
    eos: '<|eot_id|>',
    bos: '<|begin_of_text|>',
  },
  smollm2: { special: CHATML, eos: '<|im_end|>' },
  mistral: {
    special: [
      '<s>',
      '</s>',
      '[INST]',
      '[/INST]',
      '[SYSTEM_PROMPT]',
      '[/SYSTEM_PROMPT]',
      '[AVAILABLE_TOOLS]',
      '[/AVAILABLE_TOOLS]',
      '[TOOL_CALLS]',
      '[ARGS]',
      '[CALL_ID]',
      '[TOOL_RESULTS]',
      '[/TOOL_RESULTS]',
    ],
    eos: '</s>',
    bos: '<s>',
  },
  'qwen3-coder': {
    special: [...CHATML, '<tool_call>', '</tool_call>', '<tool_response>', '</tool_response>'],
    eos: '<|im_end|>',
  },
  functiongemma: {
    special: [
      '<bos>',
      '<eos>',
      '<start_of_turn>',
      '<end_of_turn>',
      '<start_function_declaration>',
      '<end_function_declaration>',
      '<start_function_call>',
      '<end_function_call>',
      '<start_function_response>',
      '<end_function_response>',
      '<escape>',
    ],
    eos: '<end_of_turn>',
    bos: '<bos>',
  },
  'phi4-mini': {
    special: [
      '<|endoftext|>',
      '<|system|>',
      '<|user|>',
      '<|assistant|>',
      '<|end|>',
      '<|tool|>',
      '<|/tool|>',
      '<|tool_call|>',
      '<|/tool_call|>',
      '<|tool_response|>',
    ],
    eos: '<|end|>',
  },
  // No <tool_call> token: its call syntax is known from its template's tool instructions.
  smollm3: { special: ['<|im_start|>', '<|im_end|>', '<|end_of_text|>'], eos: '<|im_end|>' },
  deepseek: {
    special: ['<｜begin▁of▁sentence｜>', '<｜end▁of▁sentence｜>', '<｜User｜>', '<｜Assistant｜>', ...DEEPSEEK_TOOLS],
    eos: '<｜end▁of▁sentence｜>',
    bos: '<｜begin▁of▁sentence｜>',
  },
  'gpt-oss': {
    special: [
      '<|startoftext|>',
      '<|endoftext|>',
      '<|start|>',
      '<|end|>',
      '<|message|>',
      '<|channel|>',
      '<|constrain|>',
      '<|return|>',
      '<|call|>',
    ],
    eos: '<|return|>',
  },
};

/** The family's turn-end token (tokenizer_config.json's eos_token) and its bos token. */
export function familyTokens(family: Family): { eos: string; bos: string | undefined } {
  return { eos: TOKENS[family].eos, bos: TOKENS[family].bos };
}

/** The family's tokenizer; `name` becomes its `name_or_path`, as the loader sets it; `template` replaces the family's. */
export function familyTokenizer(family: Family, opts: { name?: string; template?: string } = {}): HfTokenizer {
  const json = tinyTokenizerJson() as { added_tokens: object[] };
  const { special, eos, bos } = TOKENS[family];
  json.added_tokens = special.map((content, i) => ({
    id: 259 + i,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  }));
  return HfTokenizer.fromJson(json, {
    chat_template: opts.template ?? familyTemplate(family),
    eos_token: eos,
    ...(bos ? { bos_token: bos } : {}),
    name_or_path: opts.name ?? `test/${family}-style`,
  });
}
