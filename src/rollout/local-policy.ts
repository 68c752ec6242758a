/**
 * The in-browser policy: the tfjs transformer plus its tokenizer behind the Policy interface.
 * It continues `context.tokens` exactly (no re-tokenisation), stops on `<|im_end|>` (or the
 * end-of-sequence token), and streams text through `onText` as soon as it decodes cleanly (a
 * multi-byte character split across tokens is held back until complete).
 */
import type { TransformerModel } from '../model/transformer.ts';
import { generate } from '../model/sampling.ts';
import type { GenerateOptions, Policy, PolicyContext, PolicyTurn } from './policy.ts';
import type { TextTokenizer } from '../tokenizer/tokenizer.ts';

export interface LocalPolicyOptions {
  id?: string;
  /** false samples from the base model (LoRA adapters off). */
  useLora?: boolean;
}

export class LocalPolicy implements Policy {
  readonly id: string;

  constructor(
    readonly model: TransformerModel,
    readonly tokenizer: TextTokenizer,
    private readonly options: LocalPolicyOptions = {},
  ) {
    this.id = options.id ?? 'local';
    if (tokenizer.vocabSize > model.config.vocabSize) {
      throw new Error(
        `LocalPolicy: tokenizer has ${tokenizer.vocabSize} tokens but the model only ${model.config.vocabSize}.`,
      );
    }
  }

  async generate(context: PolicyContext, options: GenerateOptions): Promise<PolicyTurn> {
    if (context.tokens.length === 0) {
      throw new Error(
        'LocalPolicy needs context.tokens: the ChatML ids of the conversation, ending with "<|im_start|>assistant\\n".',
      );
    }
    const stops = new Set(this.tokenizer.stopIds);
    const content: number[] = [];
    let emitted = '';
    const out = await generate(this.model, [context.tokens], {
      maxNewTokens: options.sampling.max_new_tokens,
      temperature: options.sampling.temperature,
      topK: options.sampling.top_k,
      topP: options.sampling.top_p,
      stopTokens: [...stops],
      seed: options.seed,
      useLora: this.options.useLora,
      padId: this.tokenizer.padId,
      signal: options.signal,
      onToken: (_row, token) => {
        if (stops.has(token) || !options.onText) return;
        content.push(token);
        const text = this.tokenizer.decode(content);
        // An incomplete UTF-8 sequence decodes to U+FFFD at the end: wait for the rest of it.
        if (text.endsWith('\uFFFD') || !text.startsWith(emitted)) return;
        const piece = text.slice(emitted.length);
        emitted = text;
        if (piece) options.onText(piece);
      },
    });
    const tokens = out.tokens[0];
    const stopped = out.finishReasons[0] === 'stop';
    const text = this.tokenizer.decode(stopped ? tokens.slice(0, -1) : tokens);
    if (options.onText && text.length > emitted.length && text.startsWith(emitted))
      options.onText(text.slice(emitted.length));
    return { text, tokens, logprobs: out.logprobs[0], finish_reason: stopped ? 'stop' : 'length' };
  }
}
