/**
 * Self-judge: the local policy model is prompted with the same
 * rubric as the remote judge and its reply parsed the same way. The prompt is written in the policy's
 * own chat format (format/conversation.ts, the one chat codec: its template and call codec, ChatML for the shipped model),
 * as its episodes are, and the reply read by that codec (a thought, gpt-oss's analysis channel, is not
 * the verdict). A small policy often fails to produce a score; that is a null vote with the reason, which
 * the ensemble simply drops.
 */
import type { ChatMessage, SamplingParams, Task, ToolSchema, Trajectory } from '../contracts.ts';
import type { TextTokenizer } from '../tokenizer/tokenizer.ts';
import { conversationFormat } from '../format/conversation.ts';

/**
 * What the self-judge needs of the policy: one generation from a chat. Declared here rather than
 * imported from src/rollout (judges and rollouts are sibling stages); a rollout Policy is one.
 */
export interface JudgingPolicy {
  readonly id: string;
  readonly tokenizer: TextTokenizer | null;
  generate(
    context: { messages: ChatMessage[]; tools: ToolSchema[]; tokens: number[] },
    options: { seed: number; sampling: SamplingParams },
  ): Promise<{ text: string }>;
}
import { parseRubricScore } from './parse-score.ts';
import { buildRubricPrompt, RUBRIC_SYSTEM_PROMPT, type RenderOptions } from './render.ts';
import { errorMessage, noScore, type Judge, type JudgeResult } from './types.ts';

export interface SelfJudgeOptions {
  id?: string;
  policy: JudgingPolicy;
  /** Greedy by default, so the same trajectory gets the same score. */
  sampling?: Partial<SamplingParams>;
  seed?: number;
  /** Small models have short contexts: a tighter rendering budget than the remote judge's. */
  render?: RenderOptions;
}

export class SelfJudge implements Judge {
  readonly id: string;
  private readonly policy: JudgingPolicy;
  private readonly sampling: SamplingParams;
  private readonly seed: number;
  private readonly render: RenderOptions;

  constructor(options: SelfJudgeOptions) {
    this.id = options.id ?? `self:${options.policy.id}`;
    this.policy = options.policy;
    this.sampling = { temperature: 0, top_k: 0, top_p: 1, max_new_tokens: 160, ...options.sampling };
    this.seed = options.seed ?? 0;
    this.render = options.render ?? { maxChars: 3_000, maxFieldChars: 300, maxAnswerChars: 600 };
  }

  async score(trajectory: Trajectory, task: Task): Promise<JudgeResult> {
    const messages: ChatMessage[] = [
      { role: 'system', content: RUBRIC_SYSTEM_PROMPT },
      { role: 'user', content: buildRubricPrompt(trajectory, task.prompt, this.render) },
    ];
    const tokenizer = this.policy.tokenizer;
    const format = conversationFormat(tokenizer);
    let text: string;
    try {
      // A template that raises on the judge's conversation (one without a system role) is a failed vote, said so.
      const tokens = tokenizer ? tokenizer.encode(format.prompt(messages, [])) : [];
      const turn = await this.policy.generate(
        { messages, tools: [], tokens },
        { seed: this.seed, sampling: this.sampling },
      );
      text = turn.text;
    } catch (err) {
      return noScore(`policy ${this.policy.id} failed to generate a judgement: ${errorMessage(err)}`);
    }
    // Reasoning models may think first; the score is in the answer after the thinking.
    return parseRubricScore(format.calls.parse(text).answer);
  }
}
