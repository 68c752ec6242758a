/**
 * The run model's tokenizer as plain data, for rollout workers (web workers and Node worker_threads
 * alike): they tokenise locally with the same tokenizer the engine samples with. Null for the byte
 * tokenizer, which workers build themselves.
 */
import { HfTokenizer } from '../../tokenizer/hf-tokenizer.ts';
import type { TextTokenizer } from '../../tokenizer/tokenizer.ts';
import type { TokenizerSpec } from './engine-api.ts';

export function tokenizerSpec(tokenizer: TextTokenizer): TokenizerSpec | null {
  return tokenizer instanceof HfTokenizer
    ? {
        json: tokenizer.json,
        config: tokenizer.configJson,
        eosTokenId: [tokenizer.eosId, ...tokenizer.stopIds.filter((id) => id !== tokenizer.eosId)],
      }
    : null;
}

/** The worker's tokenizer from a spec; undefined (the byte tokenizer) for null. */
export function tokenizerFromSpec(spec: TokenizerSpec | null): TextTokenizer | undefined {
  return spec ? HfTokenizer.fromJson(spec.json, spec.config, { eosTokenId: spec.eosTokenId }) : undefined;
}
