import { describe, expect, it } from 'vitest';
import type { ToolSchema } from '../../src/contracts.ts';
import { ByteTokenizer } from '../../src/tokenizer/byte-tokenizer.ts';
import { chatExample, examplesFromRows, instructionExample, readSftRows } from '../../src/train/sft-data.ts';
import { ChatTemplate } from '../../src/format/chat-template.ts';
import { familyTokenizer } from '../format/family-templates.ts';

const tok = new ByteTokenizer();
const trained = (s: { tokens: number[]; mask: ArrayLike<number> }) => tok.decode(s.tokens.filter((_, i) => s.mask[i]));

describe('SFT examples', () => {
  it('trains on assistant content and its <|im_end|> only', () => {
    const ex = chatExample(
      {
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'hello' },
        ],
      },
      tok,
    );
    expect(tok.decode(ex.tokens)).toBe('<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nhello<|im_end|>\n');
    expect(trained(ex)).toBe('hello<|im_end|>');
  });

  it("renders OpenAI tool_calls as Hermes <tool_call> in the byte model's compact form and wraps tool results", () => {
    const ex = chatExample(
      {
        messages: [
          { role: 'user', content: '2+2?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ type: 'function', function: { name: 'calc', arguments: '{"expression":"2+2"}' } }],
          },
          { role: 'tool', content: '4' },
          { role: 'assistant', content: '4' },
        ],
        tools: [
          {
            name: 'calc',
            description: 'arithmetic',
            parameters: { type: 'object', properties: { expression: { type: 'string' } } },
          },
        ],
      },
      tok,
      { systemStyle: 'compact' },
    );
    const text = tok.decode(ex.tokens);
    expect(text.startsWith('<|im_start|>system\n')).toBe(true);
    expect(text).toContain('<tools>calc(expression?)</tools>');
    expect(text).toContain('<|im_start|>tool\n<tool_response>\n4\n</tool_response><|im_end|>');
    expect(trained(ex)).toBe(
      '<tool_call>{"name":"calc","arguments":{"expression":"2+2"}}</tool_call><|im_end|>4<|im_end|>',
    );
  });

  it('turns instruction rows into a user/assistant pair', () => {
    const a = instructionExample({ instruction: 'Add', input: '1 2', output: '3' }, tok);
    expect(tok.decode(a.tokens)).toContain('user\nAdd\n\n1 2<|im_end|>');
    expect(trained(a)).toBe('3<|im_end|>');
    expect(trained(instructionExample({ prompt: 'p', completion: 'c' }, tok))).toBe('c<|im_end|>');
  });

  it('reads mixed JSONL and names the bad line', () => {
    const rows = [
      '{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}',
      '',
      '{"instruction":"x","output":"y"}',
    ];
    const read = readSftRows(rows.join('\n'));
    expect(read.map((r) => r.line)).toEqual([1, 3]);
    expect(examplesFromRows(read, tok)).toHaveLength(2);
    expect(() => readSftRows(`${rows[0]}\n{"foo":1}`)).toThrow(/line 2/);
    // A row that reads but cannot be rendered names its own line too.
    expect(() =>
      examplesFromRows(readSftRows(`\n${JSON.stringify({ messages: [{ role: 'user', content: 'a' }] })}`), tok),
    ).toThrow(/line 2: .*no assistant/);
    expect(() => chatExample({ messages: [{ role: 'user', content: 'a' }] }, tok)).toThrow(/no assistant/);
  });

  // The model's own chat codec renders SFT rows, as it renders the model's episodes: never ChatML for a model that does not speak it.
  describe('in the model’s own chat template', () => {
    const calc: ToolSchema = {
      name: 'calc',
      description: 'arithmetic',
      parameters: { type: 'object', properties: { expression: { type: 'string' } } },
    };

    it('renders a Llama model’s row as its template does and trains on the reply and <|eot_id|>', () => {
      const llama = familyTokenizer('llama3.1');
      const messages = [
        { role: 'user' as const, content: 'hi' },
        { role: 'assistant' as const, content: 'hello' },
      ];
      const ex = chatExample({ messages }, llama);
      const template = ChatTemplate.fromTokenizerConfig(llama.configJson, { tools: true })!;
      expect(llama.decode(ex.tokens)).toBe(template.render(messages));
      expect(llama.decode(ex.tokens)).not.toContain('<|im_start|>');
      expect(llama.decode(ex.tokens.filter((_, i) => ex.mask[i]))).toBe('hello<|eot_id|>');
    });

    it('gives a Qwen model its template’s tool block, calls and results, the calls trained', () => {
      const qwen = familyTokenizer('qwen2.5');
      const ex = chatExample(
        {
          messages: [
            { role: 'user', content: '2+2?' },
            {
              role: 'assistant',
              content: null,
              tool_calls: [{ type: 'function', function: { name: 'calc', arguments: '{"expression":"2+2"}' } }],
            },
            { role: 'tool', content: '4' },
            { role: 'assistant', content: '4' },
          ],
          tools: [calc],
        },
        qwen,
      );
      const text = qwen.decode(ex.tokens);
      const template = ChatTemplate.fromTokenizerConfig(qwen.configJson, { tools: true })!;
      // Spindle's system prompt without its own tool list, then the template's: the tools are listed once.
      expect(text.split('"name": "calc", "description"').length - 1).toBe(1);
      expect(text.split('<tool_response>').length - 1).toBe(1);
      // The call is trained as the template writes it, so the text is what apply_chat_template gives for the row.
      const call = '<tool_call>\n{"name": "calc", "arguments": {"expression": "2+2"}}\n</tool_call>';
      expect(qwen.decode(ex.tokens.filter((_, i) => ex.mask[i]))).toBe(`${call}<|im_end|>4<|im_end|>`);
      const system = text.slice('<|im_start|>system\n'.length, text.indexOf('\n\n# Tools'));
      const messages = [
        { role: 'system' as const, content: system },
        { role: 'user' as const, content: '2+2?' },
        { role: 'assistant' as const, content: call },
        { role: 'tool' as const, content: '<tool_response>\n4\n</tool_response>' },
        { role: 'assistant' as const, content: '4' },
      ];
      expect(text).toBe(template.render(messages, { tools: [calc] }));
    });

    it('refuses tool calls for a template that drops them, instead of training on conversations without them', () => {
      const smol = familyTokenizer('smollm2');
      const row = {
        messages: [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: '<tool_call>\n{"name":"calc","arguments":{}}\n</tool_call>' },
          { role: 'tool', content: '4' },
          { role: 'assistant', content: '4' },
        ],
      };
      expect(() => chatExample(row, smol)).toThrow(/cannot render tool calls/);
      expect(
        chatExample(
          {
            messages: [
              { role: 'user', content: 'q' },
              { role: 'assistant', content: 'a' },
            ],
          },
          smol,
        ).tokens.length,
      ).toBeGreaterThan(0);
    });
  });
});
