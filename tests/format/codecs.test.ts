/**
 * The call formats of the small-model families beyond Hermes and Llama's JSON: each read in the forms its
 * models write (several calls per turn, a think block, text around the calls, the family's other spelling),
 * an unreadable call turned into an error the model learns from, a turn lifted into `tool_calls` only when
 * the template writes it back as written, and hostile turns read in linear time and at most
 * MAX_CALLS_PER_TURN calls (a quadratic parser would run the megabyte turns past the test's timeout).
 */
import { describe, expect, it } from 'vitest';
import { DEEPSEEK_CALLS } from '../../src/format/codecs/deepseek.ts';
import { FUNCTION_GEMMA_CALLS } from '../../src/format/codecs/function-gemma.ts';
import { HARMONY_CALLS } from '../../src/format/codecs/harmony.ts';
import { MISTRAL_CALLS } from '../../src/format/codecs/mistral.ts';
import { PHI4_CALLS } from '../../src/format/codecs/phi4.ts';
import { QWEN_XML_CALLS } from '../../src/format/codecs/qwen-xml.ts';
import { isCallError, MAX_CALLS_PER_TURN, type ParsedCall } from '../../src/format/parse.ts';
import type { ToolCallCodec } from '../../src/format/codecs/codec.ts';

const calc = (expression: string) => ({ name: 'calc', arguments: { expression } });
const names = (calls: ParsedCall[]) => calls.map((c) => (isCallError(c) ? 'error' : c.name));

describe('Mistral [TOOL_CALLS]', () => {
  const parse = MISTRAL_CALLS.parse;
  it('reads name[ARGS]{…} calls, one [TOOL_CALLS] each, with a [CALL_ID], a think block and text before them', () => {
    expect(parse('[TOOL_CALLS]calc[ARGS]{"expression": "2+3"}')).toEqual({
      thought: null,
      calls: [calc('2+3')],
      answer: '',
      errors: [],
    });
    expect(
      parse('[TOOL_CALLS]calc[CALL_ID]a1b2c3d4e[ARGS]{"expression": "1"}[TOOL_CALLS]js[ARGS]{"code": "2"}').calls,
    ).toEqual([calc('1'), { name: 'js', arguments: { code: '2' } }]);
    expect(parse('<think>\nAdd them.\n</think>\nLet me add.[TOOL_CALLS]calc[ARGS]{"expression": "2+3"}')).toEqual({
      thought: 'Add them.',
      calls: [calc('2+3')],
      answer: 'Let me add.',
      errors: [],
    });
    expect(parse('The answer is 5.')).toEqual({ thought: null, calls: [], answer: 'The answer is 5.', errors: [] });
  });

  it('reads the older JSON list, ids and all', () => {
    expect(
      parse(
        '[TOOL_CALLS][{"name": "calc", "arguments": {"expression": "1"}, "id": "abcdefghi"}, {"name": "calc", "arguments": {"expression": "2"}}]',
      ).calls,
    ).toEqual([calc('1'), calc('2')]);
  });

  it('turns a broken call into an error and reads the calls after it', () => {
    const t = parse(
      '[TOOL_CALLS]calc{"expression": "1"}[TOOL_CALLS]calc[ARGS]{"expression": "2"}[TOOL_CALLS]bad name[ARGS]{}[TOOL_CALLS]calc[ARGS]"2"',
    );
    expect(names(t.calls)).toEqual(['error', 'calc', 'error', 'error']);
    expect(t.errors).toEqual([
      expect.stringMatching(/^\[TOOL_CALLS\] without \[ARGS\]/),
      expect.stringMatching(/tool name before \[ARGS\] is not a name/),
      expect.stringMatching(/arguments of calc are cut off or not a JSON object/),
    ]);
    expect(parse('[TOOL_CALLS]calc[ARGS]{"expression": "2+').errors).toEqual([
      expect.stringMatching(/arguments of calc are cut off/),
    ]);
  });

  it('lifts the name[ARGS] form with the text before it as written; the JSON list, a broken call or text after the calls stay text', () => {
    expect(MISTRAL_CALLS.lift('Sure. [TOOL_CALLS]calc[ARGS]{"expression": "1"}')).toEqual({
      content: 'Sure. ',
      calls: [calc('1')],
    });
    expect(MISTRAL_CALLS.lift('[TOOL_CALLS][{"name": "calc", "arguments": {}}]')).toBeNull();
    expect(MISTRAL_CALLS.lift('[TOOL_CALLS]calc[ARGS]{"expression": "1"} and then')).toBeNull();
    expect(MISTRAL_CALLS.lift('[TOOL_CALLS]calc[ARGS]{"expression": "1"}[TOOL_CALLS]calc')).toBeNull();
    expect(MISTRAL_CALLS.lift('no calls')).toBeNull();
  });
});

describe('Qwen3-Coder XML', () => {
  const parse = QWEN_XML_CALLS.parse;
  const xml = (e: string) =>
    `<tool_call>\n<function=calc>\n<parameter=expression>\n${e}\n</parameter>\n</function>\n</tool_call>`;
  it('reads each <function=…> with its parameters, in or out of <tool_call>, several per turn', () => {
    expect(parse(xml('2+3'))).toEqual({ thought: null, calls: [calc('2+3')], answer: '', errors: [] });
    expect(parse(`I will add.\n\n${xml('1')}\n${xml('2')}`)).toEqual({
      thought: null,
      calls: [calc('1'), calc('2')],
      answer: 'I will add.',
      errors: [],
    });
    expect(
      parse(
        '<function=write>\n<parameter=path>\na.txt\n</parameter>\n<parameter=text>\nline 1\nline 2\n</parameter>\n</function>',
      ).calls,
    ).toEqual([{ name: 'write', arguments: { path: 'a.txt', text: 'line 1\nline 2' } }]);
  });

  it('keeps values as text, but a JSON object or list as its value', () => {
    const call = parse(
      '<function=f>\n<parameter=n>\n5\n</parameter>\n<parameter=o>\n{"a": [1, 2]}\n</parameter>\n<parameter=l>\n[1, 2]\n</parameter>\n</function>',
    ).calls[0];
    expect(call).toEqual({ name: 'f', arguments: { n: '5', o: { a: [1, 2] }, l: [1, 2] } });
  });

  it('reads a last call cut off anywhere as far as it goes; a call with no name is an error', () => {
    expect(parse('<tool_call>\n<function=calc>\n<parameter=expression>\n2+3').calls).toEqual([calc('2+3')]);
    expect(parse('<tool_call>\n<function=calc>\n<parameter=expression>\n2+3\n</parameter>\n').calls).toEqual([
      calc('2+3'),
    ]);
    const bad = parse(
      '<function=>\n</function>\n<function=calc>\n<parameter=expression>\n1\n</parameter>\n</function>',
    );
    expect(names(bad.calls)).toEqual(['error', 'calc']);
    expect(bad.errors).toEqual([expect.stringMatching(/^<function=…> names no tool/)]);
  });

  it('lifts calls with the text before them trimmed, as its template writes it', () => {
    expect(QWEN_XML_CALLS.lift(`I will add.\n\n${xml('1')}`)).toEqual({ content: 'I will add.', calls: [calc('1')] });
    expect(QWEN_XML_CALLS.lift(`${xml('1')}\nDone.`)).toBeNull();
  });
});

describe('FunctionGemma', () => {
  const parse = FUNCTION_GEMMA_CALLS.parse;
  it('reads its notation: <escape> strings, numbers, booleans, null, nested objects and lists, bare words', () => {
    expect(parse('<start_function_call>call:calc{expression:<escape>2+3<escape>}<end_function_call>')).toEqual({
      thought: null,
      calls: [calc('2+3')],
      answer: '',
      errors: [],
    });
    const call = parse(
      '<start_function_call>call:f{n:5,x:-1.5e2,b:true,z:null,o:{k:<escape>a, b<escape>},l:[1,<escape>two<escape>],w:plain}<end_function_call>',
    ).calls[0];
    expect(call).toEqual({
      name: 'f',
      arguments: { n: 5, x: -150, b: true, z: null, o: { k: 'a, b' }, l: [1, 'two'], w: 'plain' },
    });
  });

  it('reads several calls, one without its closing tag at the end', () => {
    const t = parse(
      'Adding.<start_function_call>call:calc{expression:<escape>1<escape>}<end_function_call><start_function_call>call:calc{expression:<escape>2<escape>}',
    );
    expect(t).toEqual({ thought: null, calls: [calc('1'), calc('2')], answer: 'Adding.', errors: [] });
  });

  it('turns a call cut off inside its arguments, or without a name or call:, into an error', () => {
    expect(parse('<start_function_call>call:calc{expression:<escape>2+').errors).toEqual([
      expect.stringMatching(/arguments of calc do not read: a string opened with <escape> is not closed/),
    ]);
    expect(parse('<start_function_call>call:{x:1}<end_function_call>').errors).toEqual([
      expect.stringMatching(/names no tool/),
    ]);
    expect(parse('<start_function_call>calc{x:1}<end_function_call>').errors).toEqual([
      expect.stringMatching(/does not start with call:/),
    ]);
  });

  it('lifts calls with the text before them as written', () => {
    expect(
      FUNCTION_GEMMA_CALLS.lift(
        'Adding.<start_function_call>call:calc{expression:<escape>1<escape>}<end_function_call>',
      ),
    ).toEqual({ content: 'Adding.', calls: [calc('1')] });
  });
});

describe('Phi-4-mini <|tool_call|>', () => {
  const parse = PHI4_CALLS.parse;
  it('reads a JSON list, one object, several blocks, and the functools spelling', () => {
    expect(
      parse(
        '<|tool_call|>[{"name": "calc", "arguments": {"expression": "1"}}, {"name": "calc", "arguments": {"expression": "2"}}]<|/tool_call|>',
      ).calls,
    ).toEqual([calc('1'), calc('2')]);
    expect(
      parse(
        '<|tool_call|>{"name": "calc", "arguments": {"expression": "1"}}<|/tool_call|><|tool_call|>[{"name": "calc", "arguments": {"expression": "2"}}]<|/tool_call|>',
      ).calls,
    ).toEqual([calc('1'), calc('2')]);
    expect(parse('<|tool_call|>functools[{"name": "calc", "arguments": {"expression": "1"}}]').calls).toEqual([
      calc('1'),
    ]);
    expect(
      parse(
        '<think>x</think>Let me see.<|tool_call|>[{"name": "calc", "arguments": {"expression": "1"}}]<|/tool_call|>',
      ),
    ).toEqual({ thought: 'x', calls: [calc('1')], answer: 'Let me see.', errors: [] });
  });

  it('turns a cut-off block into an error', () => {
    expect(parse('<|tool_call|>[{"name": "calc", "arguments": {"expr').errors).toEqual([
      expect.stringMatching(/^invalid JSON in <\|tool_call\|> \(it is cut off or not JSON\)/),
    ]);
  });
});

describe('DeepSeek tool-call tokens', () => {
  const parse = DEEPSEEK_CALLS.parse;
  const v3 = (args: string) =>
    `<｜tool▁call▁begin｜>function<｜tool▁sep｜>calc\n\`\`\`json\n${args}\n\`\`\`<｜tool▁call▁end｜>`;
  it("reads V3's fenced form and V3.1's bare one, several per turn", () => {
    expect(
      parse(`<｜tool▁calls▁begin｜>${v3('{"expression": "1"}')}\n${v3('{"expression": "2"}')}<｜tool▁calls▁end｜>`),
    ).toEqual({ thought: null, calls: [calc('1'), calc('2')], answer: '', errors: [] });
    expect(
      parse(
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>calc<｜tool▁sep｜>{"expression": "1"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
      ).calls,
    ).toEqual([calc('1')]);
    expect(
      parse(
        `Reasoning done.</think>\n\nLet me compute.<｜tool▁calls▁begin｜>${v3('{"expression": "1"}')}<｜tool▁calls▁end｜>`,
      ),
    ).toMatchObject({ thought: 'Reasoning done.', answer: 'Let me compute.', calls: [calc('1')] });
  });

  it('reads a last call cut off after its arguments; one without a separator or with broken JSON is an error', () => {
    expect(
      parse('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>calc\n```json\n{"expression": "1"}')
        .calls,
    ).toEqual([calc('1')]);
    expect(
      parse('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>calc {"expression": "1"}<｜tool▁call▁end｜>').errors,
    ).toEqual([expect.stringMatching(/has no <｜tool▁sep｜>/)]);
    expect(parse(`<｜tool▁calls▁begin｜>${v3('{"expression": ')}`).errors).toEqual([
      expect.stringMatching(/invalid JSON in the arguments of calc/),
    ]);
  });

  it("lifts calls with their arguments' JSON exactly as written (its templates write the text they are given)", () => {
    const lifted = DEEPSEEK_CALLS.lift(
      `Computing.<｜tool▁calls▁begin｜>${v3('{"expression":"1"}')}<｜tool▁calls▁end｜>`,
    );
    expect(lifted).toEqual({ content: 'Computing.', calls: [{ ...calc('1'), argumentsText: '{"expression":"1"}' }] });
    expect(DEEPSEEK_CALLS.argumentsAs).toBe('text');
  });
});

describe('gpt-oss harmony', () => {
  const parse = HARMONY_CALLS.parse;
  const call =
    '<|start|>assistant<|channel|>commentary to=functions.calc <|constrain|>json<|message|>{"expression":"2+3"}';
  it('reads the analysis as the thought, a message to=functions.<tool> as a call, the final message as the answer', () => {
    expect(parse(`<|channel|>analysis<|message|>Add them.<|end|>${call}`)).toEqual({
      thought: 'Add them.',
      calls: [calc('2+3')],
      answer: '',
      errors: [],
    });
    expect(parse('<|channel|>final<|message|>5')).toEqual({ thought: null, calls: [], answer: '5', errors: [] });
    // The recipient in the role part of the header, as some renderings put it.
    expect(
      parse(
        '<|channel|>analysis<|message|>x<|end|><|start|>assistant to=functions.calc<|channel|>commentary json<|message|>{"expression": "1"}',
      ).calls,
    ).toEqual([calc('1')]);
    expect(parse('Just text.')).toEqual({ thought: null, calls: [], answer: 'Just text.', errors: [] });
  });

  it('turns a call to anything but functions., or with broken JSON, into an error', () => {
    expect(parse('<|channel|>commentary to=python <|message|>print(1)').errors).toEqual([
      expect.stringMatching(/a message to python is not a tool call Spindle runs/),
    ]);
    expect(
      parse('<|channel|>commentary to=functions.calc <|constrain|>json<|message|>{"expression": "2').errors,
    ).toEqual([expect.stringMatching(/invalid JSON in the arguments of calc/)]);
  });

  it('lifts the analysis as thinking and the calls with their JSON as written, or the final text as content', () => {
    expect(HARMONY_CALLS.lift(`<|channel|>analysis<|message|>Add them.<|end|>${call}`)).toEqual({
      content: '',
      reasoning: 'Add them.',
      calls: [{ ...calc('2+3'), argumentsText: '{"expression":"2+3"}' }],
    });
    expect(
      HARMONY_CALLS.lift('<|channel|>analysis<|message|>Easy.<|end|><|start|>assistant<|channel|>final<|message|>5'),
    ).toEqual({ content: '5', reasoning: 'Easy.', calls: [] });
    expect(
      HARMONY_CALLS.lift('<|channel|>final<|message|>5<|end|><|start|>assistant<|channel|>analysis<|message|>late'),
    ).toBeNull();
    expect(HARMONY_CALLS.lift('Just text.')).toBeNull();
    expect(HARMONY_CALLS.reasoningField).toBe('thinking');
  });
});

describe('hostile turns', () => {
  const mb = 1_000_000;
  const cases: [ToolCallCodec, string, string[]][] = [
    [
      MISTRAL_CALLS,
      '[TOOL_CALLS]calc[ARGS]{"expression": "1"}',
      [
        '[TOOL_CALLS]'.repeat(mb / 12),
        `[TOOL_CALLS]x[ARGS]{"a${'[TOOL_CALLS]x[ARGS]{"a'.repeat(mb / 20)}`,
        `[TOOL_CALLS]${'['.repeat(mb)}`,
      ],
    ],
    [
      QWEN_XML_CALLS,
      '<function=calc>\n<parameter=expression>\n1\n</parameter>\n</function>',
      [
        '<function='.repeat(mb / 10),
        `<function=f>${'<parameter=a>'.repeat(mb / 13)}`,
        `<function=f>\n<parameter=${'x'.repeat(mb)}`,
      ],
    ],
    [
      FUNCTION_GEMMA_CALLS,
      '<start_function_call>call:calc{expression:<escape>1<escape>}<end_function_call>',
      [
        '<start_function_call>'.repeat(mb / 21),
        `<start_function_call>call:f${'{a:'.repeat(mb / 3)}`,
        `<start_function_call>call:f{a:<escape>${'<escape'.repeat(mb / 7)}`,
      ],
    ],
    [
      PHI4_CALLS,
      '<|tool_call|>[{"name": "calc", "arguments": {"expression": "1"}}]<|/tool_call|>',
      ['<|tool_call|>'.repeat(mb / 13), `<|tool_call|>${'['.repeat(mb)}`, `<|tool_call|>[{"name": "${'\\'.repeat(mb)}`],
    ],
    [
      DEEPSEEK_CALLS,
      '<｜tool▁call▁begin｜>calc<｜tool▁sep｜>{"expression": "1"}<｜tool▁call▁end｜>',
      [
        '<｜tool▁call▁begin｜>'.repeat(mb / 20),
        `<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n${'\n```'.repeat(mb / 4)}`,
      ],
    ],
    [
      HARMONY_CALLS,
      '<|start|>assistant<|channel|>commentary to=functions.calc <|constrain|>json<|message|>{"expression": "1"}<|call|>',
      [
        '<|message|>'.repeat(mb / 11),
        `<|channel|>${'x'.repeat(mb)}<|message|>`,
        '<|start|>assistant<|message|>'.repeat(mb / 30),
      ],
    ],
  ];
  for (const [codec, one, hostile] of cases) {
    it(`${codec.family}: megabyte turns read in linear time, never throwing; at most MAX_CALLS_PER_TURN calls`, () => {
      for (const text of hostile) {
        const parsed = codec.parse(text);
        expect(parsed.calls.length).toBeLessThanOrEqual(MAX_CALLS_PER_TURN);
        expect(() => codec.lift(text)).not.toThrow();
      }
      const many = codec.parse(Array(10_000).fill(one).join(''));
      expect(many.calls).toHaveLength(MAX_CALLS_PER_TURN);
      expect(many.calls.every((c) => !isCallError(c))).toBe(true);
      expect(many.errors).toEqual([expect.stringMatching(/^too many tool calls/)]);
    });
  }
});
