/**
 * A policy that replays scripted assistant turns: the environments' experts (solvability tests, SFT
 * transcripts) and the agent-loop tests. The turn to play is the number of assistant messages already
 * in the context, so one instance serves any number of episodes. With a tokenizer it behaves like a
 * token-level policy: the turn text is encoded, `<|im_end|>` appended, and each token gets a logprob
 * drawn deterministically from the sampling seed.
 */
import type { GenerateOptions, Policy, PolicyContext, PolicyTurn } from './policy.ts';
import type { TextTokenizer } from '../tokenizer/tokenizer.ts';
import { createRng } from '../rng.ts';

export type Script = readonly string[] | ((context: PolicyContext, turn: number) => string);

export interface ScriptedPolicyOptions {
  id?: string;
  turns: Script;
  tokenizer?: TextTokenizer | null;
  /** Deliver each turn's text in pieces of this many characters through `onText` (default: whole turn). */
  pieceChars?: number;
}

export class ScriptedPolicy implements Policy {
  readonly id: string;
  readonly tokenizer: TextTokenizer | null;
  private readonly turns: Script;
  private readonly pieceChars: number;

  constructor(options: ScriptedPolicyOptions) {
    this.id = options.id ?? 'scripted';
    this.tokenizer = options.tokenizer ?? null;
    this.turns = options.turns;
    this.pieceChars = options.pieceChars ?? Infinity;
  }

  async generate(context: PolicyContext, options: GenerateOptions): Promise<PolicyTurn> {
    options.signal?.throwIfAborted();
    const turn = context.messages.filter((m) => m.role === 'assistant').length;
    const text = this.textFor(context, turn);
    if (options.onText)
      for (let i = 0; i < text.length; i += this.pieceChars) options.onText(text.slice(i, i + this.pieceChars));
    if (!this.tokenizer) return { text, tokens: [], logprobs: [], finish_reason: 'stop' };
    const tokens = [...this.tokenizer.encode(text), this.tokenizer.imEndId];
    const rng = createRng(options.seed);
    // Plausible log-probabilities in (-2, 0]: deterministic per seed so tests can compare runs.
    const logprobs = tokens.map(() => Math.log(1 - rng.next() * 0.86));
    return { text, tokens, logprobs, finish_reason: 'stop' };
  }

  private textFor(context: PolicyContext, turn: number): string {
    if (typeof this.turns === 'function') return this.turns(context, turn);
    if (turn >= this.turns.length) {
      throw new Error(
        `ScriptedPolicy "${this.id}" has no turn ${turn + 1}: only ${this.turns.length} scripted; script a final answer turn without a tool call`,
      );
    }
    return this.turns[turn];
  }
}
