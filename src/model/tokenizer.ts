/** The tokenizer interface every policy and trainer uses (byte-level, or a Hugging Face tokenizer.json). */

/** Text ↔ token ids, with the ChatML special tokens as single ids. */
export interface TextTokenizer {
  readonly vocabSize: number;
  encode(text: string): number[];
  decode(ids: number[]): string;
  /** Id of `<|im_end|>`: generation stops on it and it ends every turn. */
  readonly imEndId: number;
  readonly eosId: number;
  readonly padId: number;
}
