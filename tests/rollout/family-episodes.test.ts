/**
 * One episode per model family through runEpisode, with a scripted policy on a tokenizer whose chat
 * template is the family's (tests/fixtures/family-templates/): the calls are read in the family's own
 * format, the tools reach the model the way its template gives them, and the stored trajectory's token
 * ids are exactly the template's rendering of its stored messages (so what was sampled is what trains,
 * Qwen3's think blocks included). A template that raises is a step error; one that drops tool calls is
 * refused for tools by name.
 */
import { describe, expect, it } from 'vitest';
import { getEnvironment } from '../../src/envs/registry.ts';
import { trajectoryToChatRow } from '../../src/export/hf-chat.ts';
import { runEpisode } from '../../src/rollout/episode.ts';
import { ScriptedPolicy } from '../../src/rollout/scripted-policy.ts';
import { familyTokenizer } from '../format/family-templates.ts';
import { expectTokensAreTheRendering, templateOf } from './family-scripts.ts';

const env = getEnvironment('arith_tool');
const task = env.generate(3, 1, 'test');
const expression = String(task.data.expression);
const answer = String(task.data.answer);
const args = JSON.stringify({ expression }).replace('":"', '": "');

/** Each family's canonical turns: a call, then the answer. */
type Scripted = 'qwen2.5' | 'qwen3' | 'llama3.1';
const SCRIPTS: Record<Scripted, string[]> = {
  'qwen2.5': [`<tool_call>\n{"name": "calc", "arguments": ${args}}\n</tool_call>`, answer],
  // Qwen3 thinks on every turn; on a call turn the block is often empty, and must stay as sampled.
  qwen3: [
    `<think>\n\n</think>\n\n<tool_call>\n{"name": "calc", "arguments": ${args}}\n</tool_call>`,
    `<think>\nThe tool says ${answer}.\n</think>\n\n${answer}`,
  ],
  'llama3.1': [`{"name": "calc", "parameters": ${args}}`, answer],
};
const STOP: Record<Scripted | 'smollm2', string> = {
  'qwen2.5': '<|im_end|>',
  qwen3: '<|im_end|>',
  'llama3.1': '<|eot_id|>',
  smollm2: '<|im_end|>',
};

/** Plain ChatML turns, for templates written inline. */
const CHATML_TURNS =
  "{% for m in messages %}{{ '<|im_start|>' + m.role + '\\n' }}{{ m.content }}{{ '<|im_end|>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

describe('an episode in each model family’s own format', () => {
  for (const family of ['qwen2.5', 'qwen3', 'llama3.1'] as const) {
    it(`${family}: calls parsed in its format, tools where its template puts them, tokens = the template's rendering of the stored messages`, async () => {
      const tokenizer = familyTokenizer(family);
      const turns = SCRIPTS[family];
      const t = await runEpisode({ policy: new ScriptedPolicy({ turns, tokenizer }), env, task, seed: 1, maxSteps: 3 });

      expect(t.finish_reason).toBe('answer');
      expect(t.steps).toHaveLength(1);
      expect(t.steps[0].tool_call).toMatchObject({
        tool_name: 'calc',
        parameters: { expression },
        error: null,
        result: answer,
      });
      expect(await env.evaluate(task, t)).toBe(1);
      expectTokensAreTheRendering(t, tokenizer);
      // The template lists the tools; Spindle's own tool text stays out of the system prompt.
      const text = tokenizer.decode(t.tokens);
      expect(text.split('"name": "calc", "description"').length - 1).toBe(1);
      expect(t.messages[0].content).not.toContain('calc');
      // The mask covers exactly what was sampled: each turn and its stop token.
      const masked = t.tokens.filter((_, i) => t.assistant_mask[i] === 1);
      expect(tokenizer.decode(masked)).toBe(turns.map((turn) => turn + STOP[family]).join(''));
    });
  }

  it('qwen3: the empty think of a call turn is rendered back as sampled, not dropped', async () => {
    const tokenizer = familyTokenizer('qwen3');
    const t = await runEpisode({
      policy: new ScriptedPolicy({ turns: SCRIPTS.qwen3, tokenizer }),
      env,
      task,
      seed: 1,
      maxSteps: 3,
    });
    const rendered = templateOf(tokenizer).render(t.messages, { tools: t.tools });
    // Given as text, the template would drop an empty think from any turn but the last; as reasoning_content written as sampled it keeps it.
    for (const turn of SCRIPTS.qwen3) expect(rendered).toContain(`<|im_start|>assistant\n${turn}<|im_end|>\n`);
    expect(t.steps[0].thought).toBe('');
  });

  it('llama3.1: a call after <|python_tag|> is read and trained as sampled', async () => {
    const tokenizer = familyTokenizer('llama3.1');
    const turns = [`<|python_tag|>{"name": "calc", "parameters": ${args}}`, answer];
    const t = await runEpisode({ policy: new ScriptedPolicy({ turns, tokenizer }), env, task, seed: 1, maxSteps: 3 });
    expect(t.steps[0].tool_call).toMatchObject({ tool_name: 'calc', result: answer });
    expect(t.final_response).toBe(answer);
    expectTokensAreTheRendering(t, tokenizer);
  });

  it('llama3.1: chat JSONL export lifts its JSON calls into tool_calls, as the Hermes ones are', async () => {
    const tokenizer = familyTokenizer('llama3.1');
    const t = await runEpisode({
      policy: new ScriptedPolicy({ turns: SCRIPTS['llama3.1'], tokenizer }),
      env,
      task,
      seed: 1,
      maxSteps: 3,
    });
    const row = trajectoryToChatRow(t);
    const assistant = row.messages.filter((m) => m.role === 'assistant');
    expect(assistant[0].tool_calls).toEqual([
      { type: 'function', function: { name: 'calc', arguments: { expression } } },
    ]);
    expect(assistant[0].content).toBe('');
    expect(assistant[1]).toEqual({ role: 'assistant', content: answer });
    expect(row.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([answer]);
  });

  it('llama3.1: two calls in one turn, which its template refuses, are a step error with the template’s message', async () => {
    const tokenizer = familyTokenizer('llama3.1');
    const two = `{"name": "calc", "parameters": ${args}}; {"name": "calc", "parameters": {"expression": "1+1"}}`;
    const t = await runEpisode({
      policy: new ScriptedPolicy({ turns: [two, answer], tokenizer }),
      env,
      task,
      seed: 1,
      maxSteps: 3,
    });
    expect(t.finish_reason).toBe('error');
    expect(t.steps).toHaveLength(1);
    expect(t.steps[0].tool_call).toBeNull();
    expect(t.steps[0].observation).toMatch(
      /^chat template error: .*This model can make only one tool call per message\./,
    );
    expect(t.final_response).toBeNull();
    // The sampled turn is kept, closed, and masked as sampled.
    expect(tokenizer.decode(t.tokens).endsWith(`${two}<|eot_id|>`)).toBe(true);
    expect(t.assistant_mask.filter((m) => m === 1)).toHaveLength(tokenizer.encode(two).length + 1);
  });

  it('a template that raises on the prompt is a step error too, not an exception', async () => {
    const strict =
      "{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}" +
      CHATML_TURNS;
    const tokenizer = familyTokenizer('smollm2', { template: strict });
    const t = await runEpisode({
      policy: new ScriptedPolicy({ turns: [answer], tokenizer }),
      env,
      task,
      seed: 1,
      maxSteps: 3,
      tools: [],
    });
    expect(t.finish_reason).toBe('error');
    expect(t.steps.map((s) => s.observation)).toEqual([
      'chat template error: chat_template failed to render: System role not supported',
    ]);
    expect(t.tokens).toEqual([]);
  });

  it('smollm2: a template that drops tool calls is refused for tools, naming the model and what to do; without tools it plays', async () => {
    const tokenizer = familyTokenizer('smollm2', { name: 'HuggingFaceTB/SmolLM2-135M-Instruct' });
    const policy = new ScriptedPolicy({ turns: [answer], tokenizer });
    await expect(runEpisode({ policy, env, task, seed: 1 })).rejects.toThrow(
      /^The chat template of the model HuggingFaceTB\/SmolLM2-135M-Instruct cannot render tool calls, and environment "arith_tool" offers calc: .*Choose an environment without tools, or give the model a template that renders tools and tool_calls \(save it as chat_template\.jinja in its folder\), or remove chat_template from its tokenizer_config\.json so Spindle uses its own ChatML format/s,
    );
    const t = await runEpisode({ policy, env, task, seed: 1, tools: [] });
    expect(t.finish_reason).toBe('answer');
    expect(t.final_response).toBe(answer);
    expectTokensAreTheRendering(t, tokenizer);
  });

  it('a template with a call format of its own falls back to plain text, and says so', async () => {
    // Calls rendered in a format of its own (no <tool_call>, no Llama JSON): Spindle's Hermes text goes in the messages as written.
    const own = CHATML_TURNS.replace(
      '{{ m.content }}',
      '{{ m.content }}{% for c in m.tool_calls or [] %}[CALL {{ c.function.name }} {{ c.function.arguments | tojson }}]{% endfor %}',
    );
    const tokenizer = familyTokenizer('smollm2', { template: own });
    const turns = SCRIPTS['qwen2.5'];
    const t = await runEpisode({ policy: new ScriptedPolicy({ turns, tokenizer }), env, task, seed: 1, maxSteps: 3 });
    const template = templateOf(tokenizer);
    expect(template.toolSupport.codec).toMatchObject({ family: 'plain', fallback: true });
    expect(template.toolSupport.codec.summary).toMatch(/^plain fallback/);
    expect(t.steps[0].tool_call).toMatchObject({ tool_name: 'calc', result: answer });
    expect(t.messages[0].content).toContain('<tools>'); // Spindle's own tool text, since the template's is not one Spindle reads
    expectTokensAreTheRendering(t, tokenizer);
  });
});
