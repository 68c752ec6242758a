/**
 * Models' own chat templates (tests/fixtures/family-templates/, written for Spindle in each family's conventions) through @huggingface/jinja: tools and
 * tool calls in the form each template expects, tool results wrapped once, calls parsed back, and the
 * turn-by-turn pieces concatenating to the template's own rendering with the sampled text appearing
 * exactly where the assistant turns are (so a mask over the sampled tokens is exactly the assistant's).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ChatMessage, ToolSchema } from '../../src/contracts.ts';
import { ChatTemplate } from '../../src/format/chat-template.ts';
import { toolResponseMessage } from '../../src/format/chatml.ts';
import { fromOpenAiMessages, toOpenAiMessages } from '../../src/format/openai-messages.ts';
import { parseAssistant } from '../../src/format/parse.ts';

const template = (name: string) =>
  ChatTemplate.fromTokenizerConfig({
    chat_template: readFileSync(new URL(`../fixtures/family-templates/${name}-style.jinja`, import.meta.url), 'utf8'),
    eos_token: '<|im_end|>',
  })!;
const calc: ToolSchema = {
  name: 'calc',
  description: 'Evaluate arithmetic',
  parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
};

const sampled = ['<tool_call>\n{"name": "calc", "arguments": {"expression": "2+3"}}\n</tool_call>', 'The answer is 5.'];
const conversation: ChatMessage[] = [
  { role: 'system', content: 'Solve the task.' },
  { role: 'user', content: 'What is 2+3?' },
  { role: 'assistant', content: sampled[0] },
  toolResponseMessage(['5']),
  { role: 'assistant', content: sampled[1] },
];

/** Builds the text turn by turn as an agent loop does; returns it and the [start, end) of each sampled piece. */
function turnByTurn(t: ChatTemplate, tools: ToolSchema[]) {
  let text = t.prompt(conversation.slice(0, 2), tools);
  const spans: [number, number][] = [];
  const take = (piece: string) => {
    spans.push([text.length, text.length + piece.length]);
    text += piece + '<|im_end|>'; // the policy stopped on its stop token (sampled, so part of the span's turn)
  };
  take(sampled[0]);
  text += t.turnClose('<|im_end|>') + t.continuation(conversation.slice(0, 3), [conversation[3]], tools);
  take(sampled[1]);
  text += t.turnClose('<|im_end|>');
  return { text, spans };
}

describe('chat templates', () => {
  it('Qwen2.5: tools in its system block, calls as tool_calls, each result wrapped once in a user turn', () => {
    const t = template('qwen2.5');
    expect(t.supportsTools).toBe(true);
    const text = t.render(conversation, { tools: [calc] });
    expect(text).toContain(
      '<tools>\n{"type": "function", "function": {"name": "calc", "description": "Evaluate arithmetic", "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]}}}\n</tools>',
    );
    expect(text).toContain(
      '<|im_start|>assistant\n<tool_call>\n{"name": "calc", "arguments": {"expression": "2+3"}}\n</tool_call><|im_end|>\n',
    );
    expect(text).toContain('<|im_start|>user\n<tool_response>\n5\n</tool_response><|im_end|>\n');
    expect(text.match(/<tool_response>/g)).toHaveLength(1);
    expect(text.endsWith('<|im_start|>assistant\nThe answer is 5.<|im_end|>\n')).toBe(true);
  });

  for (const name of ['qwen2.5', 'qwen3', 'smollm2']) {
    it(`${name}: turn-by-turn pieces equal the full rendering and the sampled text sits exactly at the assistant turns`, () => {
      const t = template(name);
      const { text, spans } = turnByTurn(t, [calc]);
      const full = t.render(conversation, { tools: [calc] });
      if (name === 'qwen3') {
        // Qwen3 renders the last assistant turn with an (empty) think block; the loop keeps what was sampled.
        expect(
          full.replace('<|im_start|>assistant\n<think>\n\n</think>\n\nThe answer', '<|im_start|>assistant\nThe answer'),
        ).toBe(text);
      } else expect(text).toBe(full);
      expect(spans.map(([a, b]) => text.slice(a, b))).toEqual(sampled);
      // Everything outside the spans is prompt: role headers, tool results, turn closes.
      const prompt = spans.reduceRight((s, [a, b]) => s.slice(0, a) + s.slice(b), text);
      for (const piece of sampled) expect(prompt).not.toContain(piece);
      expect(parseAssistant(text.slice(...spans[0])).calls).toEqual([
        { name: 'calc', arguments: { expression: '2+3' } },
      ]);
    });
  }

  it('a template without tools (SmolLM2) gets the Hermes text as the policy wrote it', () => {
    const t = template('smollm2');
    expect(t.supportsTools).toBe(false);
    const text = t.render(conversation);
    expect(text).toContain('<|im_start|>tool\n<tool_response>\n5\n</tool_response><|im_end|>\n');
    expect(text).toContain(`<|im_start|>assistant\n${sampled[0]}<|im_end|>`);
  });

  it('names a template that does not parse and one that drops the assistant text', () => {
    expect(() => new ChatTemplate('{% for m in messages %}')).toThrow(/chat_template does not parse as Jinja/);
    expect(() => new ChatTemplate('{% for m in messages %}{{ m.role }}{% endfor %}')).toThrow(
      /drops the assistant message content/,
    );
    expect(ChatTemplate.fromTokenizerConfig({})).toBeNull();
  });
});

describe('OpenAI messages', () => {
  it('splits calls into tool_calls and results into bare tool messages, and converts back losslessly', () => {
    const two: ChatMessage[] = [
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content:
          '<think>two calls</think>\n<tool_call>\n{"name": "calc", "arguments": {"expression": "1"}}\n</tool_call>\n<tool_call>\n{"name": "calc", "arguments": {"expression": "2"}}\n</tool_call>',
      },
      toolResponseMessage(['1', 'line\n2']),
    ];
    const open = toOpenAiMessages(two);
    expect(open).toEqual([
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: '<think>two calls</think>',
        tool_calls: [
          { type: 'function', function: { name: 'calc', arguments: { expression: '1' } } },
          { type: 'function', function: { name: 'calc', arguments: { expression: '2' } } },
        ],
      },
      { role: 'tool', content: '1' },
      { role: 'tool', content: 'line\n2' },
    ]);
    expect(toOpenAiMessages(fromOpenAiMessages(open))).toEqual(open);
  });

  it('keeps a turn with an unreadable call as text', () => {
    const bad: ChatMessage = { role: 'assistant', content: '<tool_call>\nnot json at all\n</tool_call>' };
    expect(toOpenAiMessages([bad])).toEqual([bad]);
  });
});
