/**
 * An episode for a Hugging Face model renders its conversation with the model's own chat template
 * (Qwen2.5's, from tests/fixtures) on a real tokenizer: tools in the template's own block (not listed
 * twice), the call parsed back from the sampled text, its result wrapped once, and the assistant mask
 * over exactly the sampled tokens.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { getEnvironment } from '../../src/envs/registry.ts';
import { ChatTemplate } from '../../src/format/chat-template.ts';
import { HfTokenizer } from '../../src/tokenizer/hf-tokenizer.ts';
import { runEpisode } from '../../src/rollout/episode.ts';
import { ScriptedPolicy } from '../../src/rollout/scripted-policy.ts';
import { TOOL_SCHEMAS } from '../../src/sandbox/tool-schemas.ts';
import { tinyTokenizerJson } from '../tokenizer/tiny-hf-tokenizer.ts';

const QWEN = readFileSync(new URL('../fixtures/family-templates/qwen2.5-style.jinja', import.meta.url), 'utf8');

describe('an episode in the model’s own chat template', () => {
  it('renders, parses and masks the conversation the way the template does', async () => {
    const tokenizer = HfTokenizer.fromJson(tinyTokenizerJson(), { chat_template: QWEN, eos_token: '<|im_end|>' });
    const env = getEnvironment('arith_tool');
    const task = env.generate(3, 1, 'test');
    const expression = String(task.data.expression);
    const turns = [
      `<tool_call>\n{"name": "calc", "arguments": {"expression": "${expression}"}}\n</tool_call>`,
      `${task.data.answer as number}`,
    ];
    const policy = new ScriptedPolicy({ turns, tokenizer });
    const t = await runEpisode({ policy, env, task, seed: 1, maxSteps: 3 });

    expect(t.steps[0].tool_call).toMatchObject({ tool_name: 'calc', error: null, result: String(task.data.answer) });
    expect(await env.evaluate(task, t)).toBe(1);
    const text = tokenizer.decode(t.tokens);
    // Exactly what the template renders for the episode's messages and tools, nothing of Spindle's own format.
    const template = ChatTemplate.fromTokenizerConfig(tokenizer.configJson, { tools: true })!;
    expect(text).toBe(template.render(t.messages, { tools: [TOOL_SCHEMAS.calc] }));
    expect(text).toContain('<tools>\n{"type": "function", "function": {"name": "calc"');
    // The tools are listed once: in the template's block, not again in Spindle's system prompt.
    expect(text.split('"name": "calc", "description"').length - 1).toBe(1);
    // The result reaches the model once, in the template's <tool_response> wrapper.
    expect(text.split('<tool_response>').length - 1).toBe(1);
    // The mask covers exactly the sampled tokens: each turn's text and its stop token.
    const masked = t.tokens.filter((_, i) => t.assistant_mask[i] === 1);
    expect(tokenizer.decode(masked)).toBe(turns.map((turn) => `${turn}<|im_end|>`).join(''));
  });
});
