/**
 * Chat JSONL rows render in transformers exactly as they were sampled, or are refused by name. "In
 * transformers" here is @huggingface/jinja rendering the family's template (tests/fixtures/family-templates/)
 * on the row as it comes back from JSON, with `tools`, as `apply_chat_template(messages, tools=tools)` does,
 * compared with the decoded token ids the episode trained on. Without the model's template a row still
 * never carries a call that did not run.
 */
import { Template } from '@huggingface/jinja';
import { describe, expect, it } from 'vitest';
import type { Trajectory } from '../../src/contracts.ts';
import { ChatRowRefused, trajectoryToChatRow, type ChatRow } from '../../src/export/hf-chat.ts';
import { ChatTemplate } from '../../src/format/chat-template.ts';
import type { HfTokenizer } from '../../src/tokenizer/hf-tokenizer.ts';
import { runEpisode } from '../../src/rollout/episode.ts';
import { familyTemplate, familyTokenizer, familyTokens, type Family } from '../format/family-templates.ts';
import {
  answer,
  args,
  CASES,
  env,
  expression,
  FamilyPolicy,
  task,
  type Case,
  type Turn,
} from '../rollout/family-scripts.ts';

function templateOf(tokenizer: HfTokenizer): ChatTemplate {
  return ChatTemplate.fromTokenizerConfig(tokenizer.configJson, {
    tools: true,
    hasToken: (t) => tokenizer.tokenToId(t) !== undefined,
  })!;
}

const modelOf = (tokenizer: HfTokenizer) => ({ template: templateOf(tokenizer), tokenizer });

/** The row rendered by the family's template as transformers renders a dataset row: from its JSON, with its tools, no generation prompt. */
function renderInTransformers(family: Family, row: ChatRow): string {
  const { messages, tools } = JSON.parse(JSON.stringify(row)) as ChatRow;
  const { bos, eos } = familyTokens(family);
  return new Template(familyTemplate(family)).render({
    messages,
    ...(tools.length ? { tools } : {}),
    add_generation_prompt: false,
    bos_token: bos ?? '',
    eos_token: eos,
  });
}

async function episode(family: Family, turns: Turn[]): Promise<{ t: Trajectory; tokenizer: HfTokenizer }> {
  const tokenizer = familyTokenizer(family);
  return {
    t: await runEpisode({ policy: new FamilyPolicy(tokenizer, turns), env, task, seed: 1, maxSteps: 3 }),
    tokenizer,
  };
}

describe('a chat JSONL row renders in its family’s template exactly as sampled', () => {
  for (const [family, c] of Object.entries(CASES) as [Family, Case][]) {
    const scripts: [string, Turn[]][] = [['one call', [{ text: c.call(expression), stop: c.callStop }, c.final]]];
    if (c.twoCalls)
      scripts.push(['two calls in a turn', [{ text: c.twoCalls(expression, '1+1'), stop: c.callStop }, c.final]]);
    for (const [what, turns] of scripts) {
      it(`${family}, ${what}`, async () => {
        const { t, tokenizer } = await episode(family, turns);
        expect(t.finish_reason).toBe('answer');
        const row = trajectoryToChatRow(t, { model: modelOf(tokenizer) });
        expect(renderInTransformers(family, row)).toBe(tokenizer.decode(t.tokens));
        const lifts = templateOf(tokenizer).liftsCalls;
        expect(row.messages.filter((m) => m.tool_calls).length).toBe(lifts ? 1 : 0);
      });
    }
  }

  it('qwen3: the empty think block of a call turn goes as reasoning_content as written, so the template keeps it', async () => {
    const { t } = await episode('qwen3', [
      { text: CASES.qwen3!.call(expression), stop: '<|im_end|>' },
      CASES.qwen3!.final,
    ]);
    const [call] = trajectoryToChatRow(t, { model: modelOf(familyTokenizer('qwen3')) }).messages.filter(
      (m) => m.role === 'assistant',
    );
    expect(call).toMatchObject({ reasoning_content: '\n\n', content: '' });
    // As content, the template drops an empty think from any turn but the last: that row would not render as sampled.
    expect(trajectoryToChatRow(t).messages[2].content.startsWith('<think>\n\n</think>')).toBe(true);
  });
});

describe('calls that never ran stay text', () => {
  it('llama3.1: Hermes-style text is its answer, not a call; the row keeps it as the text it sampled', async () => {
    const hermes = `<tool_call>\n{"name": "calc", "arguments": ${args(expression)}}\n</tool_call>`;
    const { t, tokenizer } = await episode('llama3.1', [
      { text: CASES['llama3.1']!.call(expression), stop: '<|eot_id|>' },
      { text: hermes, stop: '<|eot_id|>' },
    ]);
    expect(t.steps).toHaveLength(1); // the Hermes turn ran nothing
    for (const row of [trajectoryToChatRow(t), trajectoryToChatRow(t, { model: modelOf(tokenizer) })]) {
      const assistant = row.messages.filter((m) => m.role === 'assistant');
      expect(assistant.map((m) => m.tool_calls?.length ?? 0)).toEqual([1, 0]);
      expect(assistant[1].content).toBe(hermes);
      expect(renderInTransformers('llama3.1', row)).toBe(tokenizer.decode(t.tokens));
    }
  });

  it('llama3.1: a two-call turn its template refused ran nothing; the row keeps it as text, and transformers renders it', async () => {
    const two = `{"name": "calc", "parameters": ${args(expression)}}; {"name": "calc", "parameters": ${args('1+1')}}`;
    const { t, tokenizer } = await episode('llama3.1', [
      { text: two, stop: '<|eot_id|>' },
      { text: answer, stop: '<|eot_id|>' },
    ]);
    expect(t.finish_reason).toBe('error');
    for (const row of [trajectoryToChatRow(t), trajectoryToChatRow(t, { model: modelOf(tokenizer) })]) {
      expect(row.messages.some((m) => m.tool_calls)).toBe(false);
      expect(renderInTransformers('llama3.1', row)).toBe(tokenizer.decode(t.tokens));
    }
  });
});

describe('a turn the template would write back otherwise', () => {
  it('qwen2.5: a compact JSON call goes as the text sampled (the template would space it); the calls after it still lift', async () => {
    const compact = `<tool_call>\n{"name":"calc","arguments":{"expression":"${expression}"}}\n</tool_call>`;
    const turns = [
      { text: compact, stop: '<|im_end|>' },
      { text: CASES['qwen2.5']!.call('1+1'), stop: '<|im_end|>' },
      { text: answer, stop: '<|im_end|>' },
    ];
    const { t, tokenizer } = await episode('qwen2.5', turns);
    const row = trajectoryToChatRow(t, { model: modelOf(tokenizer) });
    expect(row.messages.filter((m) => m.role === 'assistant').map((m) => m.tool_calls?.length ?? 0)).toEqual([0, 1, 0]);
    expect(renderInTransformers('qwen2.5', row)).toBe(tokenizer.decode(t.tokens));
  });

  it('is refused by name when even the text does not render as sampled', async () => {
    // Llama's template trims each message: a turn sampled with a trailing newline cannot come back as sampled.
    const { t, tokenizer } = await episode('llama3.1', [{ text: `${answer}\n`, stop: '<|eot_id|>' }]);
    const refuse = () => trajectoryToChatRow(t, { model: modelOf(tokenizer) });
    expect(refuse).toThrow(ChatRowRefused);
    expect(refuse).toThrow(
      new RegExp(
        `^trajectory ${t.id} is not exported as chat JSONL: the model's template renders its row as .* where the episode sampled .*\\(character \\d+\\)$`,
      ),
    );
  });
});
