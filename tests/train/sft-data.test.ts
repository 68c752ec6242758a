import { describe, expect, it } from 'vitest';
import { ByteTokenizer } from '../../src/model/byte-tokenizer.ts';
import { chatExample, examplesFromJsonl, instructionExample, trajectoryExample } from '../../src/train/sft-data.ts';
import { trajectory } from './fixtures.ts';

const tok = new ByteTokenizer();
const trained = (s: { tokens: number[]; mask: ArrayLike<number> }) => tok.decode(s.tokens.filter((_, i) => s.mask[i]));

describe('SFT examples', () => {
  it('trains on assistant content and its <|im_end|> only', () => {
    const ex = chatExample({ messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }] }, tok);
    expect(tok.decode(ex.tokens)).toBe('<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nhello<|im_end|>\n');
    expect(trained(ex)).toBe('hello<|im_end|>');
  });

  it('renders OpenAI tool_calls as Hermes <tool_call> and wraps tool results', () => {
    const ex = chatExample(
      {
        messages: [
          { role: 'user', content: '2+2?' },
          { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'calc', arguments: '{"expression":"2+2"}' } }] },
          { role: 'tool', content: '4' },
          { role: 'assistant', content: '4' },
        ],
        tools: [{ name: 'calc', description: 'arithmetic', parameters: { type: 'object', properties: { expression: { type: 'string' } } } }],
      },
      tok,
      { systemStyle: 'compact' },
    );
    const text = tok.decode(ex.tokens);
    expect(text.startsWith('<|im_start|>system\n')).toBe(true);
    expect(text).toContain('<tools>calc(expression?)</tools>');
    expect(text).toContain('<|im_start|>tool\n<tool_response>\n4\n</tool_response><|im_end|>');
    expect(trained(ex)).toBe('<tool_call>\n{"name":"calc","arguments":{"expression":"2+2"}}\n</tool_call><|im_end|>4<|im_end|>');
  });

  it('turns instruction rows into a user/assistant pair', () => {
    const a = instructionExample({ instruction: 'Add', input: '1 2', output: '3' }, tok);
    expect(tok.decode(a.tokens)).toContain('user\nAdd\n\n1 2<|im_end|>');
    expect(trained(a)).toBe('3<|im_end|>');
    expect(trained(instructionExample({ prompt: 'p', completion: 'c' }, tok))).toBe('c<|im_end|>');
  });

  it('reads mixed JSONL and names the bad line', () => {
    const rows = ['{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}', '', '{"instruction":"x","output":"y"}'];
    expect(examplesFromJsonl(rows.join('\n'), tok)).toHaveLength(2);
    expect(() => examplesFromJsonl(`${rows[0]}\n{"foo":1}`, tok)).toThrow(/line 2/);
    expect(() => chatExample({ messages: [{ role: 'user', content: 'a' }] }, tok)).toThrow(/no assistant/);
  });

  it('uses a trajectory’s own tokens and mask', () => {
    expect(trajectoryExample(trajectory({ tokens: [1, 2], assistant_mask: [0, 1] }))).toEqual({ tokens: [1, 2], mask: [0, 1] });
    expect(() => trajectoryExample(trajectory({ tokens: [] }))).toThrow(/no tokens/);
  });
});
