/**
 * The in-browser policy: the tfjs transformer plus its tokenizer behind the Policy interface.
 * It continues `context.tokens` exactly (no re-tokenisation), stops on `<|im_end|>` (or the
 * end-of-sequence token), and streams text through `onText` as soon as it decodes cleanly (a
 * multi-byte character split across tokens is held back until complete).
 */
import type { TransformerModel } from '../model/transformer.ts';
import { generate } from '../model/sampling.ts';
import { TurnCacheStore } from '../model/turn-cache.ts';
import type { GenerateOptions, Policy, PolicyContext, PolicyTurn } from './policy.ts';
import type { TextTokenizer } from '../tokenizer/tokenizer.ts';

export interface LocalPolicyOptions {
  id?: string;
  /** false samples from the base model (LoRA adapters off). */
  useLora?: boolean;
  /**
   * Keep each episode's keys and values between its turns, so a turn prefills only what is new (the
   * tool observation and the next prompt) instead of the whole conversation (default true; false is the
   * full prefill the turn caches are tested and benchmarked against).
   */
  reuseTurnCaches?: boolean;
}

/** Turn caches one LocalPolicy may hold: a few episodes' full contexts for the models it runs. */
const TURN_CACHE_BYTES = 256 * 2 ** 20;

export class LocalPolicy implements Policy {
  readonly id: string;
  /** The turn caches of its episodes in flight; null when reuseTurnCaches is off. */
  readonly turnCaches: TurnCacheStore | null;

  constructor(
    readonly model: TransformerModel,
    readonly tokenizer: TextTokenizer,
    private readonly options: LocalPolicyOptions = {},
  ) {
    this.id = options.id ?? 'local';
    this.turnCaches = options.reuseTurnCaches === false ? null : new TurnCacheStore(TURN_CACHE_BYTES);
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
    const useLora = (this.options.useLora ?? this.model.loraEnabled) && this.model.lora !== null;
    const past = this.turnCaches?.lookup(context.episode, context.tokens, this.model, useLora) ?? null;
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
      past: [past],
      keepCaches: this.turnCaches !== null && context.episode !== undefined,
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
    if (out.caches) this.turnCaches!.put(context.episode, out.caches[0], this.model, useLora);
    const tokens = out.tokens[0];
    const stopped = out.finishReasons[0] === 'stop';
    const text = this.tokenizer.decode(stopped ? tokens.slice(0, -1) : tokens);
    if (options.onText && text.length > emitted.length && text.startsWith(emitted))
      options.onText(text.slice(emitted.length));
    return { text, tokens, logprobs: out.logprobs[0], finish_reason: stopped ? 'stop' : 'length' };
  }

  releaseEpisode(episode: string): void {
    this.turnCaches?.release(episode);
  }
}
