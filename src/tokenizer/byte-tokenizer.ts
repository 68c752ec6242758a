/**
 * The shipped models' tokenizer: one token per UTF-8 byte (ids 0–255) plus the chat and tool
 * special tokens as single ids. Small vocabulary, no training, never an unknown character.
 *
 * Special tokens are matched as literal strings when encoding, so text that spells `<think>`
 * becomes the special id (as with HF added tokens). Decoding never throws: byte runs that are not
 * valid UTF-8 (a multi-byte character cut by generation) decode to U+FFFD; `StreamDecoder` instead
 * holds back an incomplete trailing character until its remaining bytes arrive.
 */
import type { TextTokenizer } from './tokenizer.ts';

export const SPECIAL_TOKENS = [
  '<|im_start|>',
  '<|im_end|>',
  '<think>',
  '</think>',
  '<tool_call>',
  '</tool_call>',
  '<tool_response>',
  '</tool_response>',
  '<|pad|>',
  '<|endoftext|>',
] as const;
export type SpecialToken = (typeof SPECIAL_TOKENS)[number];

const BYTE_COUNT = 256;

export class ByteTokenizer implements TextTokenizer {
  readonly vocabSize = BYTE_COUNT + SPECIAL_TOKENS.length;
  readonly imStartId = this.specialId('<|im_start|>');
  readonly imEndId = this.specialId('<|im_end|>');
  readonly padId = this.specialId('<|pad|>');
  readonly eosId = this.specialId('<|endoftext|>');
  readonly stopIds = [this.imEndId, this.eosId];
  private readonly encoder = new TextEncoder();
  // Longest first, so no special token is cut by a shorter one that prefixes it.
  private readonly specialPattern = new RegExp(
    [...SPECIAL_TOKENS]
      .sort((a, b) => b.length - a.length)
      .map((s) => s.replace(/[|]/g, '\\|'))
      .join('|'),
    'g',
  );

  specialId(token: SpecialToken): number {
    const index = SPECIAL_TOKENS.indexOf(token);
    if (index < 0) throw new Error(`"${token}" is not a special token of the byte tokenizer.`);
    return BYTE_COUNT + index;
  }

  isSpecial(id: number): boolean {
    return id >= BYTE_COUNT && id < this.vocabSize;
  }

  encode(text: string): number[] {
    const ids: number[] = [];
    let last = 0;
    for (const m of text.matchAll(this.specialPattern)) {
      ids.push(...this.encoder.encode(text.slice(last, m.index)));
      ids.push(BYTE_COUNT + SPECIAL_TOKENS.indexOf(m[0] as SpecialToken));
      last = m.index + m[0].length;
    }
    ids.push(...this.encoder.encode(text.slice(last)));
    return ids;
  }

  decode(ids: number[]): string {
    const stream = new StreamDecoder(this);
    return ids.map((id) => stream.push(id)).join('') + stream.flush();
  }

  /** Text of one id on its own: a special token's string, or the byte as Latin-1 for inspection. */
  idToString(id: number): string {
    if (this.isSpecial(id)) return SPECIAL_TOKENS[id - BYTE_COUNT];
    if (id >= 0 && id < BYTE_COUNT) return String.fromCharCode(id);
    throw new Error(`Token id ${id} is outside the byte tokenizer's vocabulary (0-${this.vocabSize - 1}).`);
  }
}

/** Incremental decoding for streaming display: `push` returns the text that became complete. */
export class StreamDecoder {
  private decoder = new TextDecoder('utf-8', { fatal: false });
  constructor(private readonly tokenizer: ByteTokenizer) {}

  push(id: number): string {
    if (this.tokenizer.isSpecial(id)) return this.flush() + this.tokenizer.idToString(id);
    if (!Number.isInteger(id) || id < 0 || id >= this.tokenizer.vocabSize) return '\uFFFD';
    return this.decoder.decode(new Uint8Array([id]), { stream: true });
  }

  /** Ends the stream: an incomplete trailing character becomes U+FFFD. */
  flush(): string {
    return this.decoder.decode();
  }
}
