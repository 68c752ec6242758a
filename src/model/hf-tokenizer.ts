/**
 * Hugging Face `tokenizer.json` tokenizers (BPE, WordPiece, Unigram …) for imported models, through
 * @huggingface/tokenizers, behind the same TextTokenizer interface as the byte tokenizer.
 * Special tokens encode as their single ids and decode back to their text (the chat format needs them).
 */
import { Tokenizer } from '@huggingface/tokenizers';
import type { TextTokenizer } from './tokenizer.ts';

export interface HfTokenizerIds {
  /** From config.json, used when tokenizer_config.json names no eos token. */
  eosTokenId?: number | number[] | null;
}

export class HfTokenizer implements TextTokenizer {
  readonly vocabSize: number;
  readonly imEndId: number;
  readonly eosId: number;
  readonly padId: number;

  private constructor(
    private readonly tokenizer: Tokenizer,
    readonly json: object,
    readonly configJson: Record<string, unknown>,
    ids: HfTokenizerIds,
  ) {
    const vocab = tokenizer.get_vocab(true);
    this.vocabSize = Math.max(...vocab.values()) + 1;
    const idOf = (token: unknown): number | undefined => {
      const content = typeof token === 'string' ? token : (token as { content?: string } | null)?.content;
      return content === undefined ? undefined : tokenizer.token_to_id(content);
    };
    const configEos = Array.isArray(ids.eosTokenId) ? ids.eosTokenId[0] : (ids.eosTokenId ?? undefined);
    const eos = idOf(configJson.eos_token) ?? configEos ?? idOf('<|endoftext|>') ?? idOf('</s>');
    if (eos === undefined) {
      throw new Error('tokenizer: no end-of-sequence token found (tokenizer_config.json "eos_token", config.json "eos_token_id", <|endoftext|> or </s>).');
    }
    this.eosId = eos;
    this.imEndId = idOf('<|im_end|>') ?? eos;
    this.padId = idOf(configJson.pad_token) ?? eos;
  }

  /** `tokenizerJson` is the parsed tokenizer.json; `tokenizerConfig` the parsed tokenizer_config.json (optional). */
  static fromJson(tokenizerJson: object, tokenizerConfig: Record<string, unknown> = {}, ids: HfTokenizerIds = {}): HfTokenizer {
    let tokenizer: Tokenizer;
    try {
      tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
    } catch (err) {
      throw new Error(`tokenizer.json could not be loaded: ${(err as Error).message}`, { cause: err });
    }
    return new HfTokenizer(tokenizer, tokenizerJson, tokenizerConfig, ids);
  }

  encode(text: string): number[] {
    return this.tokenizer.encode(text, { add_special_tokens: false }).ids;
  }

  decode(ids: number[]): string {
    return this.tokenizer.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false });
  }

  tokenToId(token: string): number | undefined {
    return this.tokenizer.token_to_id(token);
  }
}
