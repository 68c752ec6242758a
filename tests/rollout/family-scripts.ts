/**
 * Scripted episodes per model family for the tests that run them (codec-families.test.ts, the chat JSONL
 * rows of tests/export): each family's canonical turns for one calc call, two calls in one turn, and the
 * answer, with the stop tokens its models end them with, and a token-level policy that samples them.
 */
import { expect } from 'vitest';
import type { Trajectory } from '../../src/contracts.ts';
import { getEnvironment } from '../../src/envs/registry.ts';
import { ChatTemplate } from '../../src/format/chat-template.ts';
import type { ToolCallFamily } from '../../src/format/codecs/codec.ts';
import type { HfTokenizer } from '../../src/tokenizer/hf-tokenizer.ts';
import type { Policy, PolicyContext, PolicyTurn } from '../../src/rollout/policy.ts';
import type { Family } from '../format/family-templates.ts';

export const env = getEnvironment('arith_tool');
export const task = env.generate(3, 1, 'test');
export const expression = String(task.data.expression);
export const answer = String(task.data.answer);
export const args = (e: string) => JSON.stringify({ expression: e }).replace('":"', '": "');

export interface Turn {
  text: string;
  /** The stop token the model ends the turn with. */
  stop: string;
}

/** Samples scripted turns as a token-level policy: the turn's tokens and its stop token. */
export class FamilyPolicy implements Policy {
  readonly id = 'family-script';
  constructor(
    readonly tokenizer: HfTokenizer,
    private readonly turns: Turn[],
  ) {}

  async generate(context: PolicyContext): Promise<PolicyTurn> {
    const { text, stop } = this.turns[context.messages.filter((m) => m.role === 'assistant').length];
    const tokens = [...this.tokenizer.encode(text), this.tokenizer.tokenToId(stop)!];
    return { text, tokens, logprobs: tokens.map(() => -0.5), finish_reason: 'stop' };
  }
}

export interface Case {
  codec: ToolCallFamily;
  /** The turn calling calc on `e` (one call) and the final answer's turn. */
  call: (e: string) => string;
  /** Two calls in one turn, as the family writes them. */
  twoCalls: ((a: string, b: string) => string) | null;
  final: Turn;
  callStop: string;
  /** What the template writes once where it lists calc. */
  listed: string;
  /** The thought the call turn carries, when it has one. */
  thought?: string;
}

const FENCE = '```';
const hermes = (e: string) => `<tool_call>\n{"name": "calc", "arguments": ${args(e)}}\n</tool_call>`;
export const CASES: Partial<Record<Family, Case>> = {
  'qwen2.5': {
    codec: 'hermes',
    call: (e) => hermes(e),
    twoCalls: (a, b) => `${hermes(a)}\n${hermes(b)}`,
    final: { text: answer, stop: '<|im_end|>' },
    callStop: '<|im_end|>',
    listed: '"name": "calc", "description"',
  },
  // Qwen3 thinks on every turn; on a call turn the block is often empty, and must stay as sampled.
  qwen3: {
    codec: 'hermes',
    thought: '',
    call: (e) => `<think>\n\n</think>\n\n${hermes(e)}`,
    twoCalls: (a, b) => `<think>\n\n</think>\n\n${hermes(a)}\n${hermes(b)}`,
    final: { text: `<think>\nThe tool says ${answer}.\n</think>\n\n${answer}`, stop: '<|im_end|>' },
    callStop: '<|im_end|>',
    listed: '"name": "calc", "description"',
  },
  // Llama's template writes one call per turn (it raises on two).
  'llama3.1': {
    codec: 'llama3-json',
    call: (e) => `{"name": "calc", "parameters": ${args(e)}}`,
    twoCalls: null,
    final: { text: answer, stop: '<|eot_id|>' },
    callStop: '<|eot_id|>',
    listed: '"name": "calc", "description"',
  },
  mistral: {
    codec: 'mistral',
    call: (e) => `[TOOL_CALLS]calc[ARGS]${args(e)}`,
    twoCalls: (a, b) => `[TOOL_CALLS]calc[ARGS]${args(a)}[TOOL_CALLS]calc[ARGS]${args(b)}`,
    final: { text: answer, stop: '</s>' },
    callStop: '</s>',
    listed: '"name": "calc", "description"',
  },
  'qwen3-coder': {
    codec: 'qwen3-coder',
    call: (e) => `<tool_call>\n<function=calc>\n<parameter=expression>\n${e}\n</parameter>\n</function>\n</tool_call>`,
    twoCalls: (a, b) =>
      [a, b]
        .map(
          (e) => `<tool_call>\n<function=calc>\n<parameter=expression>\n${e}\n</parameter>\n</function>\n</tool_call>`,
        )
        .join('\n'),
    final: { text: answer, stop: '<|im_end|>' },
    callStop: '<|im_end|>',
    listed: '<name>calc</name>',
  },
  functiongemma: {
    codec: 'function-gemma',
    call: (e) => `<start_function_call>call:calc{expression:<escape>${e}<escape>}<end_function_call>`,
    twoCalls: (a, b) =>
      [a, b].map((e) => `<start_function_call>call:calc{expression:<escape>${e}<escape>}<end_function_call>`).join(''),
    final: { text: answer, stop: '<end_of_turn>' },
    callStop: '<end_of_turn>',
    listed: 'declaration:calc{',
  },
  'phi4-mini': {
    codec: 'phi4-mini',
    call: (e) => `<|tool_call|>[{"name": "calc", "arguments": ${args(e)}}]<|/tool_call|>`,
    twoCalls: (a, b) =>
      `<|tool_call|>[{"name": "calc", "arguments": ${args(a)}}, {"name": "calc", "arguments": ${args(b)}}]<|/tool_call|>`,
    final: { text: answer, stop: '<|end|>' },
    callStop: '<|end|>',
    listed: '{"name": "calc", "description"',
  },
  // SmolLM3's template takes the calls in the assistant's text: they stay there, as sampled.
  smollm3: {
    codec: 'hermes',
    thought: 'I will use calc.',
    call: (e) =>
      `<think>\nI will use calc.\n</think>\n<tool_call>\n{"name": "calc", "arguments": ${args(e)}}\n</tool_call>`,
    twoCalls: (a, b) =>
      [a, b].map((e) => `<tool_call>\n{"name": "calc", "arguments": ${args(e)}}\n</tool_call>`).join('\n'),
    final: { text: `<think>\nThe tool says ${answer}.\n</think>\n${answer}`, stop: '<|im_end|>' },
    callStop: '<|im_end|>',
    listed: '"name": "calc", "description"',
  },
  deepseek: {
    codec: 'deepseek',
    call: (e) =>
      `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>calc\n${FENCE}json\n${args(e)}\n${FENCE}<｜tool▁call▁end｜><｜tool▁calls▁end｜>`,
    twoCalls: (a, b) =>
      `<｜tool▁calls▁begin｜>${[a, b].map((e) => `<｜tool▁call▁begin｜>function<｜tool▁sep｜>calc\n${FENCE}json\n${args(e)}\n${FENCE}<｜tool▁call▁end｜>`).join('\n')}<｜tool▁calls▁end｜>`,
    final: { text: answer, stop: '<｜end▁of▁sentence｜>' },
    callStop: '<｜end▁of▁sentence｜>',
    listed: '### calc',
  },
  // gpt-oss stops at <|call|> after a call, so a turn holds one; its arguments are compact JSON, kept as written.
  'gpt-oss': {
    codec: 'harmony',
    thought: 'Use calc.',
    call: (e) =>
      `<|channel|>analysis<|message|>Use calc.<|end|><|start|>assistant<|channel|>commentary to=functions.calc <|constrain|>json<|message|>${JSON.stringify({ expression: e })}`,
    twoCalls: null,
    final: {
      text: `<|channel|>analysis<|message|>The tool says ${answer}.<|end|><|start|>assistant<|channel|>final<|message|>${answer}`,
      stop: '<|return|>',
    },
    callStop: '<|call|>',
    listed: 'type calc = ',
  },
};

/** The template as the agent loop uses it: the tool-use variant, the tokenizer's special tokens. */
export function templateOf(tokenizer: HfTokenizer): ChatTemplate {
  return ChatTemplate.fromTokenizerConfig(tokenizer.configJson, {
    tools: true,
    hasToken: (t) => tokenizer.tokenToId(t) !== undefined,
  })!;
}

/** The episode's token ids are exactly the template's rendering of its messages. */
export function expectTokensAreTheRendering(t: Trajectory, tokenizer: HfTokenizer): void {
  const rendered = templateOf(tokenizer).render(t.messages, { tools: t.tools });
  expect(tokenizer.decode(t.tokens)).toBe(rendered);
  expect(t.tokens).toEqual(tokenizer.encode(rendered));
}
