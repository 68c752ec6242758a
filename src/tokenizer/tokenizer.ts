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
  /**
   * Every id that ends a turn: generation stops on any of them. `<|im_end|>` and the end of sequence, and
   * a model's other end tokens (config.json's list of eos ids; Llama 3's `<|eot_id|>` and `<|eom_id|>`,
   * which ends a turn that calls a tool).
   */
  readonly stopIds: readonly number[];
}
