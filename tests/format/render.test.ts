import { describe, expect, it } from 'vitest';
import type { ChatMessage, ToolSchema } from '../../src/contracts.ts';
import {
  assistantHeader,
  assistantTurnClose,
  compactSignature,
  IM_END,
  observationText,
  parseAssistant,
  renderChatML,
  renderContinuation,
  renderSystemPrompt,
  toolResponseMessage,
} from '../../src/format/index.ts';

const calc: ToolSchema = {
  name: 'calc',
  description: 'Arithmetic.',
  parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
};
const grep: ToolSchema = {
  name: 'grep',
  description: 'Search.',
  parameters: {
    type: 'object',
    properties: { pattern: { type: 'string' }, path: { type: 'string' } },
    required: ['pattern'],
  },
};
const js: ToolSchema = {
  name: 'js',
  description: 'Run JavaScript.',
  parameters: { type: 'object', properties: { code: { type: 'string' } }, required: ['code'] },
};

describe('ChatML rendering', () => {
  it('renders turns with im_start/im_end and an open assistant header', () => {
    const text = renderChatML(
      [
        { role: 'system', content: 'S' },
        { role: 'user', content: 'Q' },
      ],
      { addGenerationPrompt: true },
    );
    expect(text).toBe('<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n');
  });

  it('renders tool responses as a tool turn with one block per call', () => {
    expect(toolResponseMessage(['14', 'error: bad'])).toEqual({
      role: 'tool',
      content: '<tool_response>\n14\n</tool_response>\n<tool_response>\nerror: bad\n</tool_response>',
    });
    expect(observationText({ result: '', error: 'calc: division by zero' })).toBe('error: calc: division by zero');
    expect(observationText({ result: 'out', error: null })).toBe('out');
  });

  it('incremental pieces concatenate to the full rendering (token ids can be built turn by turn)', () => {
    const system = renderSystemPrompt([calc], { style: 'compact' });
    const user: ChatMessage = { role: 'user', content: 'What is 6*7?' };
    const turn1 = '<think>multiply</think><tool_call>{"name":"calc","arguments":{"expression":"6*7"}}</tool_call>';
    const tool = toolResponseMessage(['42']);
    const turn2 = '42';

    let text = renderChatML([system, user], { addGenerationPrompt: true });
    text += turn1 + IM_END; // the policy sampled <|im_end|>
    text += assistantTurnClose(true) + renderContinuation([tool]);
    text += turn2; // cut by the token limit: the loop closes the turn
    text += assistantTurnClose(false);

    const full = renderChatML([
      system,
      user,
      { role: 'assistant', content: turn1 },
      tool,
      { role: 'assistant', content: turn2 },
    ]);
    expect(text).toBe(full);
    expect(renderContinuation([tool]).endsWith(assistantHeader())).toBe(true);
  });
});

describe('system prompt', () => {
  it('compact style is short, ASCII, and lists name(params)', () => {
    const msg = renderSystemPrompt([calc, js], { style: 'compact' });
    expect(msg.role).toBe('system');
    expect(msg.content).toContain('<tools>calc(expression) js(code)</tools>');
    expect(msg.content.length).toBeLessThan(120);
    expect(/^[\x20-\x7e\n]*$/.test(msg.content)).toBe(true);
    expect(compactSignature(grep)).toBe('grep(pattern, path?)');
  });

  it('described style lists one tool a line with its description after its signature', () => {
    const msg = renderSystemPrompt([calc, { ...js, description: '' }], { style: 'described' });
    expect(msg.content).toContain(`<tools>\ncalc(expression): ${calc.description}\njs(code)\n</tools>`);
    expect(msg.content).toContain('Think, call tools as JSON, then answer.');
  });

  it('full style embeds each JSON schema in <tools> and explains the call format', () => {
    const msg = renderSystemPrompt([calc, js], { style: 'full', instructions: 'Be brief.' });
    expect(msg.content.startsWith('Be brief.')).toBe(true);
    const block = /<tools>\n([\s\S]*?)\n<\/tools>/.exec(msg.content);
    expect(block).not.toBeNull();
    const schemas = block![1].split('\n').map((l) => JSON.parse(l));
    expect(schemas.map((s) => s.function.name)).toEqual(['calc', 'js']);
    expect(schemas[0].function.parameters.required).toEqual(['expression']);
    expect(msg.content).toContain('{"name": "<function-name>", "arguments": {<argument-name>: <value>}}');
  });

  it('the example call syntax in the compact prompt is what the parser reads', () => {
    const example = '<tool_call>{"name":"calc","arguments":{"expression":"1+2"}}</tool_call>';
    expect(parseAssistant(example).calls).toEqual([{ name: 'calc', arguments: { expression: '1+2' } }]);
  });
});
