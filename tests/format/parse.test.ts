import { describe, expect, it } from 'vitest';
import { isCallError, parseAssistant, type ParsedCall } from '../../src/format/index.ts';

interface Case {
  name: string;
  text: string;
  thought: string | null;
  calls: (ParsedCall | { error: RegExp })[];
  answer: string;
  errors?: RegExp[];
}

const CASES: Case[] = [
  {
    name: 'good: think then one call',
    text: '<think>I need 17*23.</think>\n<tool_call>\n{"name": "calc", "arguments": {"expression": "17*23"}}\n</tool_call>',
    thought: 'I need 17*23.',
    calls: [{ name: 'calc', arguments: { expression: '17*23' } }],
    answer: '',
  },
  {
    name: 'final answer only, with think',
    text: '<think>The tool said 391.</think>\nThe answer is 391.',
    thought: 'The tool said 391.',
    calls: [],
    answer: 'The answer is 391.',
  },
  {
    name: 'no think at all',
    text: '<tool_call>{"name":"sh","arguments":{"command":"ls -a"}}</tool_call>',
    thought: null,
    calls: [{ name: 'sh', arguments: { command: 'ls -a' } }],
    answer: '',
  },
  {
    name: 'several calls in one turn',
    text:
      '<think>two things</think>\n<tool_call>\n{"name": "calc", "arguments": {"expression": "1+1"}}\n</tool_call>\n' +
      '<tool_call>\n{"name": "js", "arguments": {"code": "[1,2].length"}}\n</tool_call>',
    thought: 'two things',
    calls: [
      { name: 'calc', arguments: { expression: '1+1' } },
      { name: 'js', arguments: { code: '[1,2].length' } },
    ],
    answer: '',
  },
  {
    name: 'single-quoted pseudo-JSON (Hermes python-dict style) with an apostrophe inside',
    text: `<tool_call>{'name': 'sh', 'arguments': {'command': "echo it's > a.txt"}}</tool_call>`,
    thought: null,
    calls: [{ name: 'sh', arguments: { command: "echo it's > a.txt" } }],
    answer: '',
  },
  {
    name: 'nested braces and a closing tag inside a string',
    text: '<tool_call>{"name": "js", "arguments": {"code": "const o = {a: {b: \\"}\\"}}; \'</tool_call>\'; o.a"}}</tool_call>',
    thought: null,
    calls: [{ name: 'js', arguments: { code: 'const o = {a: {b: "}"}}; \'</tool_call>\'; o.a' } }],
    answer: '',
  },
  {
    name: 'raw newlines inside a code string',
    text: '<tool_call>{"name": "js", "arguments": {"code": "let s = 0;\nfor (let i = 0; i < 3; i++) s += i;\ns"}}</tool_call>',
    thought: null,
    calls: [{ name: 'js', arguments: { code: 'let s = 0;\nfor (let i = 0; i < 3; i++) s += i;\ns' } }],
    answer: '',
  },
  {
    name: 'arguments given as a JSON string (OpenAI style)',
    text: '<tool_call>{"name": "calc", "arguments": "{\\"expression\\": \\"2**10\\"}"}</tool_call>',
    thought: null,
    calls: [{ name: 'calc', arguments: { expression: '2**10' } }],
    answer: '',
  },
  {
    name: 'unterminated last call with complete JSON',
    text: '<think>go</think><tool_call>{"name": "calc", "arguments": {"expression": "9/3"}}',
    thought: 'go',
    calls: [{ name: 'calc', arguments: { expression: '9/3' } }],
    answer: '',
  },
  {
    name: 'truncated JSON (cut by the token limit) after a good call',
    text:
      '<tool_call>{"name": "calc", "arguments": {"expression": "1+2"}}</tool_call>\n' +
      '<tool_call>{"name": "js", "arguments": {"code": "let x = [1, 2',
    thought: null,
    calls: [{ name: 'calc', arguments: { expression: '1+2' } }, { error: /cut off/ }],
    answer: '',
    errors: [/invalid JSON in <tool_call> \(the call is cut off/],
  },
  {
    name: 'malformed JSON between tags',
    text: '<tool_call>{"name": "calc" "arguments": {"expression": "1"}}</tool_call>',
    thought: null,
    calls: [{ error: /invalid JSON/ }],
    answer: '',
    errors: [/expected ',' or '}'/],
  },
  {
    name: 'call object without a name',
    text: '<tool_call>{"arguments": {"expression": "1"}}</tool_call>',
    thought: null,
    calls: [{ error: /no "name"/ }],
    answer: '',
    errors: [/no "name"/],
  },
  {
    name: 'empty tool call',
    text: '<tool_call></tool_call>',
    thought: null,
    calls: [{ error: /empty <tool_call>/ }],
    answer: '',
  },
  {
    name: 'text before and after the calls is the answer',
    text: 'Let me check.\n<tool_call>{"name":"sh","arguments":{"command":"pwd"}}</tool_call>\nDone soon.',
    thought: null,
    calls: [{ name: 'sh', arguments: { command: 'pwd' } }],
    answer: 'Let me check.\nDone soon.',
  },
  {
    name: 'extra closing brace inside the tags is tolerated',
    text: '<tool_call>{"name":"calc","arguments":{"expression":"4*4"}}}</tool_call>',
    thought: null,
    calls: [{ name: 'calc', arguments: { expression: '4*4' } }],
    answer: '',
  },
  {
    name: 'unterminated think (cut by the token limit)',
    text: '<think>Let me think about the sum of',
    thought: 'Let me think about the sum of',
    calls: [],
    answer: '',
    errors: [/unterminated <think>/],
  },
  {
    name: 'stray </think> (the prompt opened the think block)',
    text: 'first reasoning</think>42',
    thought: 'first reasoning',
    calls: [],
    answer: '42',
  },
  {
    name: 'call written inside the think block (interleaved thinking)',
    text: '<think>check first <tool_call>{"name":"calc","arguments":{"expression":"3*3"}}</tool_call> then answer</think>9',
    thought: 'check first\nthen answer',
    calls: [{ name: 'calc', arguments: { expression: '3*3' } }],
    answer: '9',
  },
  {
    name: 'whitespace everywhere',
    text: '  \n<think>\n  spaced  \n</think>\n\n  <tool_call>  \n  {  "name" : "calc" , "arguments" : { "expression" : " 1 + 1 " } }  \n  </tool_call>  \n ',
    thought: 'spaced',
    calls: [{ name: 'calc', arguments: { expression: ' 1 + 1 ' } }],
    answer: '',
  },
  {
    name: 'OpenAI function object, unquoted keys and Python literals',
    text: '<tool_call>{function: {name: "js", arguments: {code: "1", strict: True, extra: None,}}}</tool_call>',
    thought: null,
    calls: [{ name: 'js', arguments: { code: '1', strict: true, extra: null } }],
    answer: '',
  },
  {
    name: 'several calls as one JSON array',
    text: '<tool_call>[{"name":"calc","arguments":{"expression":"1"}},{"name":"calc","arguments":{"expression":"2"}}]</tool_call>',
    thought: null,
    calls: [
      { name: 'calc', arguments: { expression: '1' } },
      { name: 'calc', arguments: { expression: '2' } },
    ],
    answer: '',
  },
  {
    name: 'arguments that are not an object',
    text: '<tool_call>{"name":"calc","arguments":[1,2]}</tool_call>',
    thought: null,
    calls: [{ error: /must be an object/ }],
    answer: '',
  },
  {
    name: 'plain answer, no tags',
    text: '  391  ',
    thought: null,
    calls: [],
    answer: '391',
  },
];

describe('parseAssistant on real-looking model outputs', () => {
  it.each(CASES)('$name', (c) => {
    const parsed = parseAssistant(c.text);
    expect(parsed.thought).toBe(c.thought);
    expect(parsed.answer).toBe(c.answer);
    expect(parsed.calls).toHaveLength(c.calls.length);
    c.calls.forEach((expected, i) => {
      const got = parsed.calls[i];
      if ('error' in expected && expected.error instanceof RegExp) {
        expect(isCallError(got)).toBe(true);
        expect((got as { error: string }).error).toMatch(expected.error);
      } else {
        expect(got).toEqual(expected);
      }
    });
    const callErrors = parsed.calls.filter(isCallError).length;
    expect(parsed.errors.length).toBeGreaterThanOrEqual(callErrors);
    for (const re of c.errors ?? []) expect(parsed.errors.some((e) => re.test(e))).toBe(true);
    if (!c.errors && callErrors === 0) expect(parsed.errors).toEqual([]);
  });

  it('keeps the raw text of a bad call so the observation can show it', () => {
    const parsed = parseAssistant('<tool_call>{"name": calc}</tool_call>');
    expect(parsed.calls[0]).toMatchObject({ raw: '{"name": calc}' });
  });

  it('does not let a "__proto__" key change the prototype of the arguments', () => {
    const parsed = parseAssistant(
      `<tool_call>{'name': 'js', 'arguments': {'__proto__': {'polluted': 1}, 'code': '1'}}</tool_call>`,
    );
    const call = parsed.calls[0] as { arguments: Record<string, unknown> };
    expect(Object.getPrototypeOf(call.arguments)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('never throws, whatever the input', () => {
    const nasty = [
      '<tool_call>'.repeat(50),
      '</think>'.repeat(10) + '<think>',
      '<tool_call>' + '{'.repeat(5000),
      '<tool_call>' + '['.repeat(200) + ']'.repeat(200) + '</tool_call>',
      '<tool_call>{"name": "x", "arguments": "' + '\\'.repeat(999) + '"}',
      '\u0000<think>\uFFFF</think><tool_call>\uD800</tool_call>',
    ];
    for (const text of nasty) {
      const parsed = parseAssistant(text);
      expect(Array.isArray(parsed.calls)).toBe(true);
      expect(typeof parsed.answer).toBe('string');
    }
  });
});
