/**
 * An episode in each of the small-model call formats beyond Hermes and Llama's JSON (Mistral, Qwen3-Coder,
 * FunctionGemma, Phi-4-mini, SmolLM3, DeepSeek, gpt-oss), through runEpisode with a policy that samples
 * the family's own turns and stop tokens, on a tokenizer whose chat template is the family's
 * (tests/fixtures/family-templates/): the codec is chosen from the template and the special tokens, the
 * calls are read in the family's format and run, the tools reach the model where its template lists them,
 * and the stored trajectory's token ids are exactly the template's rendering of its stored messages (what
 * was sampled is what trains), one call per turn and two.
 */
import { describe, expect, it } from 'vitest';
import type { Trajectory } from '../../src/contracts.ts';
import { getEnvironment } from '../../src/envs/registry.ts';
import { ChatTemplate } from '../../src/format/chat-template.ts';
import type { ToolCallFamily } from '../../src/format/tool-call-codec.ts';
import type { HfTokenizer } from '../../src/model/hf-tokenizer.ts';
import { runEpisode } from '../../src/rollout/episode.ts';
import type { Policy, PolicyContext, PolicyTurn } from '../../src/rollout/policy.ts';
import { familyTokenizer, type Family } from '../format/family-templates.ts';

const env = getEnvironment('arith_tool');
const task = env.generate(3, 1, 'test');
const expression = String(task.data.expression);
const answer = String(task.data.answer);
const args = (e: string) => JSON.stringify({ expression: e }).replace('":"', '": "');

interface Turn {
  text: string;
  /** The stop token the model ends the turn with. */
  stop: string;
}

/** Samples scripted turns as a token-level policy: the turn's tokens and its stop token. */
class FamilyPolicy implements Policy {
  readonly id = 'family-script';
  constructor(readonly tokenizer: HfTokenizer, private readonly turns: Turn[]) {}

  async generate(context: PolicyContext): Promise<PolicyTurn> {
    const { text, stop } = this.turns[context.messages.filter((m) => m.role === 'assistant').length];
    const tokens = [...this.tokenizer.encode(text), this.tokenizer.tokenToId(stop)!];
    return { text, tokens, logprobs: tokens.map(() => -0.5), finish_reason: 'stop' };
  }
}

interface Case {
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
const CASES: Partial<Record<Family, Case>> = {
  mistral: {
    codec: 'mistral', call: (e) => `[TOOL_CALLS]calc[ARGS]${args(e)}`, twoCalls: (a, b) => `[TOOL_CALLS]calc[ARGS]${args(a)}[TOOL_CALLS]calc[ARGS]${args(b)}`,
    final: { text: answer, stop: '</s>' }, callStop: '</s>', listed: '"name": "calc", "description"',
  },
  'qwen3-coder': {
    codec: 'qwen3-coder',
    call: (e) => `<tool_call>\n<function=calc>\n<parameter=expression>\n${e}\n</parameter>\n</function>\n</tool_call>`,
    twoCalls: (a, b) => [a, b].map((e) => `<tool_call>\n<function=calc>\n<parameter=expression>\n${e}\n</parameter>\n</function>\n</tool_call>`).join('\n'),
    final: { text: answer, stop: '<|im_end|>' }, callStop: '<|im_end|>', listed: '<name>calc</name>',
  },
  functiongemma: {
    codec: 'function-gemma',
    call: (e) => `<start_function_call>call:calc{expression:<escape>${e}<escape>}<end_function_call>`,
    twoCalls: (a, b) => [a, b].map((e) => `<start_function_call>call:calc{expression:<escape>${e}<escape>}<end_function_call>`).join(''),
    final: { text: answer, stop: '<end_of_turn>' }, callStop: '<end_of_turn>', listed: 'declaration:calc{',
  },
  'phi4-mini': {
    codec: 'phi4-mini',
    call: (e) => `<|tool_call|>[{"name": "calc", "arguments": ${args(e)}}]<|/tool_call|>`,
    twoCalls: (a, b) => `<|tool_call|>[{"name": "calc", "arguments": ${args(a)}}, {"name": "calc", "arguments": ${args(b)}}]<|/tool_call|>`,
    final: { text: answer, stop: '<|end|>' }, callStop: '<|end|>', listed: '{"name": "calc", "description"',
  },
  // SmolLM3's template takes the calls in the assistant's text: they stay there, as sampled.
  smollm3: {
    codec: 'hermes', thought: 'I will use calc.',
    call: (e) => `<think>\nI will use calc.\n</think>\n<tool_call>\n{"name": "calc", "arguments": ${args(e)}}\n</tool_call>`,
    twoCalls: (a, b) => [a, b].map((e) => `<tool_call>\n{"name": "calc", "arguments": ${args(e)}}\n</tool_call>`).join('\n'),
    final: { text: `<think>\nThe tool says ${answer}.\n</think>\n${answer}`, stop: '<|im_end|>' }, callStop: '<|im_end|>', listed: '"name": "calc", "description"',
  },
  deepseek: {
    codec: 'deepseek',
    call: (e) => `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>calc\n${FENCE}json\n${args(e)}\n${FENCE}<｜tool▁call▁end｜><｜tool▁calls▁end｜>`,
    twoCalls: (a, b) => `<｜tool▁calls▁begin｜>${[a, b].map((e) => `<｜tool▁call▁begin｜>function<｜tool▁sep｜>calc\n${FENCE}json\n${args(e)}\n${FENCE}<｜tool▁call▁end｜>`).join('\n')}<｜tool▁calls▁end｜>`,
    final: { text: answer, stop: '<｜end▁of▁sentence｜>' }, callStop: '<｜end▁of▁sentence｜>', listed: '### calc',
  },
  // gpt-oss stops at <|call|> after a call, so a turn holds one; its arguments are compact JSON, kept as written.
  'gpt-oss': {
    codec: 'harmony', thought: 'Use calc.',
    call: (e) => `<|channel|>analysis<|message|>Use calc.<|end|><|start|>assistant<|channel|>commentary to=functions.calc <|constrain|>json<|message|>${JSON.stringify({ expression: e })}`,
    twoCalls: null,
    final: { text: `<|channel|>analysis<|message|>The tool says ${answer}.<|end|><|start|>assistant<|channel|>final<|message|>${answer}`, stop: '<|return|>' },
    callStop: '<|call|>', listed: 'type calc = ',
  },
};

/** The template as the agent loop uses it: the tool-use variant, the tokenizer's special tokens. */
function templateOf(tokenizer: HfTokenizer): ChatTemplate {
  return ChatTemplate.fromTokenizerConfig(tokenizer.configJson, { tools: true, hasToken: (t) => tokenizer.tokenToId(t) !== undefined })!;
}

function expectTokensAreTheRendering(t: Trajectory, tokenizer: HfTokenizer): void {
  const rendered = templateOf(tokenizer).render(t.messages, { tools: t.tools });
  expect(tokenizer.decode(t.tokens)).toBe(rendered);
  expect(t.tokens).toEqual(tokenizer.encode(rendered));
}

describe('an episode in each small-model call format', () => {
  for (const [family, c] of Object.entries(CASES) as [Family, Case][]) {
    it(`${family}: codec ${c.codec} chosen, the call read and run, tools where its template puts them, tokens = the rendering`, async () => {
      const tokenizer = familyTokenizer(family);
      expect(templateOf(tokenizer).toolSupport.codec.family).toBe(c.codec);
      const turns = [{ text: c.call(expression), stop: c.callStop }, c.final];
      const t = await runEpisode({ policy: new FamilyPolicy(tokenizer, turns), env, task, seed: 1, maxSteps: 3 });

      expect(t.finish_reason).toBe('answer');
      expect(t.steps).toHaveLength(1);
      expect(t.steps[0].tool_call).toMatchObject({ tool_name: 'calc', parameters: { expression }, error: null, result: answer });
      expect(t.steps[0].thought).toBe(c.thought ?? null);
      expect(t.final_response).toBe(answer);
      expect(await env.evaluate(task, t)).toBe(1);
      expectTokensAreTheRendering(t, tokenizer);
      const text = tokenizer.decode(t.tokens);
      expect(text.split(c.listed).length - 1).toBe(1);
      expect(t.messages[0].content).not.toContain('calc');
      // The mask covers exactly what was sampled: each turn and its stop token.
      const masked = t.tokens.filter((_, i) => t.assistant_mask[i] === 1);
      expect(tokenizer.decode(masked)).toBe(turns.map((turn) => turn.text + turn.stop).join(''));
    });

    if (c.twoCalls) {
      const twoCalls = c.twoCalls;
      it(`${family}: two calls in one turn are both run, and render back as sampled`, async () => {
        const tokenizer = familyTokenizer(family);
        const turns = [{ text: twoCalls(expression, '1+1'), stop: c.callStop }, c.final];
        const t = await runEpisode({ policy: new FamilyPolicy(tokenizer, turns), env, task, seed: 1, maxSteps: 3 });
        expect(t.steps.map((s) => s.tool_call?.result)).toEqual([answer, '2']);
        expect(t.finish_reason).toBe('answer');
        expectTokensAreTheRendering(t, tokenizer);
      });
    }
  }
});
