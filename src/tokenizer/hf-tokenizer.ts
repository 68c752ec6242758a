/**
 * Hugging Face `tokenizer.json` tokenizers (BPE, WordPiece, Unigram …) for imported models, through
 * @huggingface/tokenizers, behind the same TextTokenizer interface as the byte tokenizer.
 * Special tokens encode as their single ids and decode back to their text (the chat format needs them).
 */
import { Tokenizer } from '@huggingface/tokenizers';
import type { TextTokenizer } from './tokenizer.ts';

/** The chat template as transformers 5's `save_pretrained` writes it, beside tokenizer_config.json instead of in it. */
export const CHAT_TEMPLATE_FILE = 'chat_template.jinja';

/** Where a model's chat template was read from. */
export type ChatTemplateFile = typeof CHAT_TEMPLATE_FILE | 'tokenizer_config.json';

export interface HfTokenizerIds {
  /** From config.json, used when tokenizer_config.json names no eos token. */
  eosTokenId?: number | number[] | null;
  /** Where the loader found the chat template; by default tokenizer_config.json when the config has one. */
  chatTemplateFile?: ChatTemplateFile | null;
}

/**
 * tokenizer_config.json with the template of a chat_template.jinja file in it (null: the folder has
 * none). The file wins over the config's own template, as in transformers; a named list keeps its other
 * templates. The template travels inside the config so every copy of the tokenizer (a rollout worker's) has it.
 */
export function withChatTemplate(
  config: Record<string, unknown>,
  jinja: string | null,
): { config: Record<string, unknown>; file: ChatTemplateFile | null } {
  if (jinja === null) return { config, file: config.chat_template == null ? null : 'tokenizer_config.json' };
  const own = config.chat_template;
  const chatTemplate = Array.isArray(own)
    ? [...(own as { name?: string }[]).filter((t) => t.name !== 'default'), { name: 'default', template: jinja }]
    : jinja;
  return { config: { ...config, chat_template: chatTemplate }, file: CHAT_TEMPLATE_FILE };
}

export class HfTokenizer implements TextTokenizer {
  readonly vocabSize: number;
  readonly imEndId: number;
  readonly eosId: number;
  readonly padId: number;
  readonly stopIds: readonly number[];
  /** Where the chat template came from (chat_template.jinja or tokenizer_config.json); null without one. */
  readonly chatTemplateFile: ChatTemplateFile | null;

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
      throw new Error(
        'tokenizer: no end-of-sequence token found (tokenizer_config.json "eos_token", config.json "eos_token_id", <|endoftext|> or </s>).',
      );
    }
    this.eosId = eos;
    this.imEndId = idOf('<|im_end|>') ?? eos;
    this.padId = idOf(configJson.pad_token) ?? eos;
    const configStops = Array.isArray(ids.eosTokenId) ? ids.eosTokenId : [];
    // Llama 3's turn ends; gpt-oss ends a tool-call turn with <|call|> (its eos, <|return|>, ends the others).
    const turnEnds = ['<|eot_id|>', '<|eom_id|>', '<|call|>'].map(idOf);
    this.stopIds = [
      ...new Set(
        [this.imEndId, eos, ...configStops, ...turnEnds].filter((id): id is number => id !== undefined && id >= 0),
      ),
    ];
    this.chatTemplateFile =
      ids.chatTemplateFile !== undefined
        ? ids.chatTemplateFile
        : configJson.chat_template == null
          ? null
          : 'tokenizer_config.json';
  }

  /** The model it was loaded for: `name_or_path`, which the loader sets to where the files came from (as transformers does). */
  get modelName(): string | null {
    return typeof this.configJson.name_or_path === 'string' ? this.configJson.name_or_path : null;
  }

  /** `tokenizerJson` is the parsed tokenizer.json; `tokenizerConfig` the parsed tokenizer_config.json (optional). */
  static fromJson(
    tokenizerJson: object,
    tokenizerConfig: Record<string, unknown> = {},
    ids: HfTokenizerIds = {},
  ): HfTokenizer {
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
