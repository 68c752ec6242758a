/**
 * The byte tokenizer (byte-tokenizer.ts) as a Hugging Face `tokenizer.json` + `tokenizer_config.json`,
 * so `AutoTokenizer.from_pretrained` loads a Spindle byte model (models/spindle-base, merged exports)
 * with the same ids: a byte-level BPE with no merges — each UTF-8 byte is one token whose id is the
 * byte's value, written as GPT-2's byte-to-character mapping — and the special tokens as added tokens
 * at 256 + their index. The chat template writes Spindle's ChatML with its tools, calls and results
 * (spindle-chat-template.ts).
 */
import { SPECIAL_TOKENS } from './byte-tokenizer.ts';
import { spindleTokenizerConfig } from './spindle-chat-template.ts';

/** GPT-2's bytes_to_unicode: printable bytes map to themselves, the rest to U+0100 onwards, in byte order. */
function byteToChar(): string[] {
  const printable = (b: number) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  let next = 256;
  return Array.from({ length: 256 }, (_, b) => String.fromCharCode(printable(b) ? b : next++));
}

export function byteTokenizerJson(): object {
  const vocab: Record<string, number> = {};
  byteToChar().forEach((c, b) => (vocab[c] = b));
  const added = SPECIAL_TOKENS.map((content, i) => ({
    id: 256 + i,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  }));
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false };
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: byteLevel,
    post_processor: null,
    decoder: byteLevel,
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: [],
    },
  };
}

export function byteTokenizerConfig(): Record<string, unknown> {
  return spindleTokenizerConfig(1024);
}
