/**
 * The token-level record of an episode, built incrementally as the conversation grows: prompt and
 * tool-response pieces are encoded (mask 0, logprob 0), sampled tokens are appended as the policy
 * produced them (mask 1, with their logprobs), so training sees exactly the ids that were sampled and
 * no re-tokenisation drift. Without a tokenizer every method is a no-op and the arrays stay empty.
 */
import type { TextTokenizer } from '../tokenizer/tokenizer.ts';

export class TokenTrace {
  readonly tokens: number[] = [];
  readonly assistantMask: number[] = [];
  readonly logprobs: number[] = [];
  readonly turnSpans: [number, number][] = [];

  constructor(readonly tokenizer: TextTokenizer | null) {}

  get length(): number {
    return this.tokens.length;
  }

  /** Text the policy did not sample (system, user, tool responses, turn closes, headers). */
  appendPrompt(text: string): void {
    if (!this.tokenizer || text === '') return;
    for (const id of this.tokenizer.encode(text)) {
      this.tokens.push(id);
      this.assistantMask.push(0);
      this.logprobs.push(0);
    }
  }

  /** Tokens the policy sampled for one turn, recorded with their span. */
  appendSampled(ids: number[], logprobs: number[]): void {
    if (!this.tokenizer) return;
    if (ids.length !== logprobs.length) {
      throw new Error(
        `policy returned ${ids.length} tokens but ${logprobs.length} logprobs; a token-level policy must give one logprob per token`,
      );
    }
    const start = this.tokens.length;
    for (let i = 0; i < ids.length; i++) {
      this.tokens.push(ids[i]);
      this.assistantMask.push(1);
      this.logprobs.push(logprobs[i]);
    }
    this.turnSpans.push([start, this.tokens.length]);
  }

  /** Whether a sampled turn ended on `<|im_end|>` (then only a newline closes it). */
  endsWithImEnd(ids: number[]): boolean {
    return this.tokenizer !== null && ids.length > 0 && ids[ids.length - 1] === this.tokenizer.imEndId;
  }
}
