/**
 * The tool-call codec per model family: chosen from what the template renders for a probe call (then the
 * call syntax its tool instructions name, then the tokenizer's special tokens), Llama's JSON calls read in
 * the forms models write them, and calls lifted into `tool_calls` only in the form the template writes
 * back. The other families' parsers are tested in codecs.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ChatTemplate } from '../../src/format/chat-template.ts';
import { liftLlamaCalls, parseLlamaAssistant } from '../../src/format/llama-calls.ts';
import { DEEPSEEK_CALLS } from '../../src/format/codecs/deepseek.ts';
import { FUNCTION_GEMMA_CALLS } from '../../src/format/codecs/function-gemma.ts';
import { HARMONY_CALLS } from '../../src/format/codecs/harmony.ts';
import { MISTRAL_CALLS } from '../../src/format/codecs/mistral.ts';
import { PHI4_CALLS } from '../../src/format/codecs/phi4.ts';
import { QWEN_XML_CALLS } from '../../src/format/codecs/qwen-xml.ts';
import {
  chooseToolCallCodec,
  HERMES_CALLS,
  LLAMA3_JSON_CALLS,
  PLAIN_CALLS,
  PROBE_TOOL,
  TOOL_CALL_CODECS,
} from '../../src/format/tool-call-codec.ts';
import { isCallError, MAX_CALLS_PER_TURN } from '../../src/format/parse.ts';
import { familyTemplate, familyTokens, type Family } from './family-templates.ts';

const calc = { name: 'calc', arguments: { expression: '2+3' } };

describe('choosing the codec', () => {
  const cases: [Family, object][] = [
    [
      'qwen2.5',
      { codec: HERMES_CALLS, listsTools: true, rendersCalls: true, callsAs: 'tool_calls', readsReasoning: false },
    ],
    [
      'qwen3',
      { codec: HERMES_CALLS, listsTools: true, rendersCalls: true, callsAs: 'tool_calls', readsReasoning: true },
    ],
    [
      'llama3.1',
      { codec: LLAMA3_JSON_CALLS, listsTools: true, rendersCalls: true, callsAs: 'tool_calls', readsReasoning: false },
    ],
    [
      'smollm2',
      { codec: PLAIN_CALLS, listsTools: false, rendersCalls: false, callsAs: 'tool_calls', readsReasoning: false },
    ],
    [
      'mistral',
      { codec: MISTRAL_CALLS, listsTools: true, rendersCalls: true, callsAs: 'tool_calls', readsReasoning: false },
    ],
    [
      'qwen3-coder',
      { codec: QWEN_XML_CALLS, listsTools: true, rendersCalls: true, callsAs: 'tool_calls', readsReasoning: false },
    ],
    [
      'functiongemma',
      {
        codec: FUNCTION_GEMMA_CALLS,
        listsTools: true,
        rendersCalls: true,
        callsAs: 'tool_calls',
        readsReasoning: false,
      },
    ],
    [
      'phi4-mini',
      { codec: PHI4_CALLS, listsTools: true, rendersCalls: true, callsAs: 'tool_calls', readsReasoning: false },
    ],
    // SmolLM3's template drops tool_calls but writes the assistant's text as given, and its tool instructions name <tool_call>.
    ['smollm3', { codec: HERMES_CALLS, listsTools: true, rendersCalls: true, callsAs: 'text', readsReasoning: false }],
    [
      'deepseek',
      { codec: DEEPSEEK_CALLS, listsTools: true, rendersCalls: true, callsAs: 'tool_calls', readsReasoning: false },
    ],
    [
      'gpt-oss',
      { codec: HARMONY_CALLS, listsTools: true, rendersCalls: true, callsAs: 'tool_calls', readsReasoning: false },
    ],
  ];
  for (const [family, support] of cases) {
    it(`${family}: from what its template renders`, () => {
      const t = new ChatTemplate(familyTemplate(family), {
        bos_token: familyTokens(family).bos,
        eos_token: familyTokens(family).eos,
      });
      expect(t.toolSupport).toEqual(support);
      expect(t.supportsTools).toBe(family !== 'smollm2');
      expect(t.liftsCalls).toBe(family !== 'smollm2' && family !== 'smollm3');
    });
  }

  it('from the special tokens when the template renders no call, and plain otherwise, saying it is a fallback', () => {
    const none = () => false;
    const only =
      (...tokens: string[]) =>
      (t: string) =>
        tokens.includes(t);
    expect(chooseToolCallCodec(null, only('<tool_call>'))).toBe(HERMES_CALLS);
    expect(chooseToolCallCodec(null, only('<|python_tag|>'))).toBe(LLAMA3_JSON_CALLS);
    expect(chooseToolCallCodec(null, only('[TOOL_CALLS]'))).toBe(MISTRAL_CALLS);
    expect(chooseToolCallCodec(null, only('<start_function_call>', '<end_function_call>'))).toBe(FUNCTION_GEMMA_CALLS);
    expect(chooseToolCallCodec(null, only('<|tool_call|>', '<|/tool_call|>'))).toBe(PHI4_CALLS);
    expect(chooseToolCallCodec(null, only('<｜tool▁calls▁begin｜>', '<｜tool▁call▁begin｜>', '<｜tool▁sep｜>'))).toBe(
      DEEPSEEK_CALLS,
    );
    expect(chooseToolCallCodec(null, only('<|channel|>', '<|message|>', '<|call|>'))).toBe(HARMONY_CALLS);
    // Every token of a format is needed: gpt-oss's <|message|> alone is not harmony.
    expect(chooseToolCallCodec(null, only('<|message|>'))).toBe(PLAIN_CALLS);
    expect(chooseToolCallCodec(null, none)).toBe(PLAIN_CALLS);
    // The template's own rendering wins over the tokens, and the instructions come between.
    expect(chooseToolCallCodec(`{"name": "${PROBE_TOOL}", "parameters": {}}`, only('<tool_call>'))).toBe(
      LLAMA3_JSON_CALLS,
    );
    expect(
      chooseToolCallCodec(`<tool_call>\n<function=${PROBE_TOOL}>\n</function>\n</tool_call>`, only('<tool_call>')),
    ).toBe(QWEN_XML_CALLS);
    expect(chooseToolCallCodec(`[CALL ${PROBE_TOOL}]`, only('<tool_call>'))).toBe(PLAIN_CALLS);
    expect(chooseToolCallCodec(null, only('<tool_call>'), 'Call as [TOOL_CALLS]name[ARGS]{...}')).toBe(MISTRAL_CALLS);
    expect(chooseToolCallCodec(null, only('<tool_call>'), 'Call tools however you like.')).toBe(HERMES_CALLS);
    expect(PLAIN_CALLS).toMatchObject({ fallback: true, summary: expect.stringMatching(/^plain fallback/) });
    expect(TOOL_CALL_CODECS.map((c) => c.fallback)).toEqual(TOOL_CALL_CODECS.map(() => false));
  });
});

describe('Llama JSON calls', () => {
  it('reads a call as the whole message, with or without <|python_tag|>, parameters or arguments', () => {
    for (const text of [
      '{"name": "calc", "parameters": {"expression": "2+3"}}',
      '<|python_tag|>{"name": "calc", "parameters": {"expression": "2+3"}}',
      '  {"name": "calc", "arguments": {"expression": "2+3"}}\n',
      "{'name': 'calc', 'parameters': {'expression': '2+3'}}",
    ])
      expect(parseLlamaAssistant(text)).toEqual({ thought: null, calls: [calc], answer: '', errors: [] });
  });

  it('reads several calls (separated, or as an array), a think block before them, and text after them', () => {
    expect(
      parseLlamaAssistant(
        '{"name": "calc", "parameters": {"expression": "1"}}; {"name": "calc", "parameters": {"expression": "2"}}',
      ).calls,
    ).toHaveLength(2);
    expect(
      parseLlamaAssistant(
        '[{"name": "calc", "parameters": {"expression": "1"}}, {"name": "js", "parameters": {"code": "2"}}]',
      ).calls.map((c) => !isCallError(c) && c.name),
    ).toEqual(['calc', 'js']);
    expect(
      parseLlamaAssistant('<think>\nAdd them.\n</think>\n{"name": "calc", "parameters": {"expression": "2+3"}}'),
    ).toEqual({ thought: 'Add them.', calls: [calc], answer: '', errors: [] });
    expect(parseLlamaAssistant('{"name": "calc", "parameters": {"expression": "2+3"}}\nThen I answer.')).toMatchObject({
      calls: [calc],
      answer: 'Then I answer.',
    });
  });

  it('leaves answers alone: text, a number, JSON that names no function', () => {
    expect(parseLlamaAssistant('The answer is 5.')).toEqual({
      thought: null,
      calls: [],
      answer: 'The answer is 5.',
      errors: [],
    });
    expect(parseLlamaAssistant('5').calls).toEqual([]);
    expect(parseLlamaAssistant('{"answer": 5}')).toMatchObject({ calls: [], answer: '{"answer": 5}' });
    expect(parseLlamaAssistant('<think>easy</think>\n5')).toMatchObject({ thought: 'easy', calls: [], answer: '5' });
  });

  it('turns a broken call into an error the model can learn from', () => {
    const cut = parseLlamaAssistant('{"name": "calc", "parameters": {"expression": "2+');
    expect(cut.calls).toHaveLength(1);
    expect(cut.errors[0]).toMatch(
      /invalid JSON in the tool call \(it is cut off or not JSON\).*expected \{"name": "<tool>", "parameters"/,
    );
    expect(parseLlamaAssistant('<|python_tag|>calc(2+3)').errors[0]).toMatch(/<\|python_tag\|> is followed by no JSON/);
    expect(parseLlamaAssistant('<|python_tag|>{"parameters": {}}').errors[0]).toMatch(/tool call has no "name"/);
    expect(parseLlamaAssistant('<think>never closed').errors).toEqual([
      'unterminated <think>: close it with </think> before the answer',
    ]);
  });

  it('reads hostile turns in time linear in their length, and at most MAX_CALLS_PER_TURN calls', () => {
    const call = '{"name": "calc", "parameters": {"expression": "1"}}';
    // Quadratic work on these megabyte turns would run past the test's timeout; no timed assertion needed.
    expect(parseLlamaAssistant(`{"name": ${'['.repeat(1_000_000)}`).calls).toHaveLength(1);
    expect(parseLlamaAssistant(call + ';'.repeat(1_000_000)).calls).toEqual([
      { name: 'calc', arguments: { expression: '1' } },
    ]);
    const many = parseLlamaAssistant(Array(10_000).fill(call).join('; '));
    expect(many.calls).toHaveLength(MAX_CALLS_PER_TURN);
    expect(many.errors).toEqual([expect.stringMatching(/^too many tool calls/)]);
  });

  it('lifts into tool_calls only what the template writes back as it was sampled', () => {
    expect(liftLlamaCalls('{"name": "calc", "parameters": {"expression": "2+3"}}')).toEqual({
      content: '',
      calls: [calc],
    });
    expect(liftLlamaCalls('<|python_tag|>{"name": "calc", "parameters": {"expression": "2+3"}}')).toBeNull(); // the template would drop the tag
    expect(liftLlamaCalls('<think>x</think>{"name": "calc", "parameters": {"expression": "2+3"}}')).toBeNull();
    expect(liftLlamaCalls('{"name": "calc", "parameters": {"expression": "2+3"}} and more')).toBeNull();
    expect(liftLlamaCalls('The answer is 5.')).toBeNull();
  });
});
