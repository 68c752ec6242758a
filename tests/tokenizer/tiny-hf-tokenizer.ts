/** A hand-built GPT-2-style byte-level BPE tokenizer.json (a few merges, ChatML special tokens) for tests. */
export function tinyTokenizerJson(): object {
  const printable = [...range(33, 127), ...range(161, 173), ...range(174, 256)];
  const codes = printable.slice();
  let extra = 0;
  const bytes = printable.slice();
  for (let b = 0; b < 256; b++) {
    if (!printable.includes(b)) {
      bytes.push(b);
      codes.push(256 + extra++);
    }
  }
  const vocab: Record<string, number> = {};
  bytes.forEach((b, i) => (vocab[String.fromCharCode(codes[i])] = b));
  Object.assign(vocab, { he: 256, ll: 257, hell: 258 });
  const added = (id: number, content: string) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [added(259, '<|im_start|>'), added(260, '<|im_end|>'), added(261, '<|endoftext|>')],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      vocab,
      merges: ['h e', 'l l', 'he ll'],
    },
  };
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, i) => from + i);
}
