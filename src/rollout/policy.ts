/**
 * The policy interface the agent loop drives. Implementations: the local tfjs model
 * (src/model), a remote OpenAI-compatible endpoint, and a scripted policy for tests.
 */
import type { ChatMessage, SamplingParams, ToolSchema } from '../contracts.ts';
import type { TextTokenizer } from '../tokenizer/tokenizer.ts';

export interface PolicyContext {
  messages: ChatMessage[];
  tools: ToolSchema[];
  /**
   * ChatML token ids of the conversation so far, ending with `<|im_start|>assistant\n`. A token-level
   * policy continues exactly these ids (no re-tokenisation drift); empty when the policy has no tokenizer.
   */
  tokens: number[];
  /**
   * The episode this turn belongs to, the same for all its turns: a policy may keep what it computed for
   * the conversation (the local model's turn cache) until `releaseEpisode`.
   */
  episode?: string;
}

export interface PolicyTurn {
  /** The assistant text, without the closing `<|im_end|>`. */
  text: string;
  /** Sampled token ids, including the closing `<|im_end|>` when generation stopped on it. */
  tokens: number[];
  /** Log-probability of each sampled token under the sampling distribution. */
  logprobs: number[];
  finish_reason: 'stop' | 'length';
}

export interface GenerateOptions {
  seed: number;
  sampling: SamplingParams;
  signal?: AbortSignal;
  /** Called with each new piece of text as it is sampled (for live display). */
  onText?: (piece: string) => void;
}

export interface Policy {
  readonly id: string;
  /** The tokenizer the policy's tokens use; null for text-only policies (remote APIs). */
  readonly tokenizer: TextTokenizer | null;
  generate(context: PolicyContext, options: GenerateOptions): Promise<PolicyTurn>;
  /** The episode ended (or was given up): whatever was kept for its next turn can go. */
  releaseEpisode?(episode: string): void;
}
