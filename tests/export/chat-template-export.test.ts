/**
 * Chat JSONL rows, rendered with the model's own chat template the way transformers' apply_chat_template
 * renders them (@huggingface/jinja, `messages` and `tools` straight from the file), give exactly the token
 * text the model trained on: the shipped model's template (models/spindle-base, the one every byte model
 * is saved and merged with) on expert episodes of every built-in environment and on episodes the shipped
 * model sampled through `spindle collect`, and each fixture family's template on episodes in its format.
 * The template's `{% generation %}` spans are the assistant mask, and Spindle's own SFT of a row trains on
 * the same tokens and mask; where a row brings tools without Spindle's system prompt, the template lists
 * them exactly as Spindle's system prompt does.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Template } from '@huggingface/jinja';
import { describe, expect, it } from 'vitest';
import type { ToolSchema, Trajectory } from '../../src/contracts.ts';
import { getEnvironment, listEnvironments } from '../../src/envs/registry.ts';
import { parseChatJsonl, trajectoryToChatRow, type ChatRow } from '../../src/export/hf-chat.ts';
import { parquetToTrajectories } from '../../src/export/parquet.ts';
import { renderSystemPrompt } from '../../src/format/system-prompt.ts';
import { byteTokenizerConfig } from '../../src/tokenizer/byte-tokenizer-json.ts';
import { loadHfModel } from '../../src/hub/hf.ts';
import { ByteTokenizer } from '../../src/tokenizer/byte-tokenizer.ts';
import type { TextTokenizer } from '../../src/tokenizer/tokenizer.ts';
import { runEpisode } from '../../src/rollout/episode.ts';
import { expertTranscripts } from '../../src/rollout/expert.ts';
import { ScriptedPolicy } from '../../src/rollout/scripted-policy.ts';
import { chatExample } from '../../src/train/sft-data.ts';
import { cli, tempDir } from '../cli/helpers.ts';
import { familyTemplate, familyTokenizer } from '../format/family-templates.ts';

const SHIPPED = JSON.parse(
  readFileSync(new URL('../../models/spindle-base/tokenizer_config.json', import.meta.url), 'utf8'),
) as { chat_template: string };
const bytes = new ByteTokenizer();

/** Marks the `{% generation %}` spans in the rendered text. */
const OPEN = '\u27e6';
const CLOSE = '\u27e7';

/** apply_chat_template(messages, tools=tools) as transformers calls it, on the row as read from the file. */
function applyChatTemplate(
  source: string,
  row: Pick<ChatRow, 'messages' | 'tools'>,
  tokens: { bos_token?: string; eos_token?: string } = {},
): string {
  return new Template(source).render({
    messages: row.messages,
    tools: row.tools.length ? row.tools : undefined,
    add_generation_prompt: false,
    bos_token: '',
    eos_token: '',
    ...tokens,
  });
}

/** The row's rendering with each `{% generation %}` span marked, as transformers' return_assistant_tokens_mask sees them. */
function generationSpans(source: string, row: ChatRow): string[] {
  const marked = source
    .replace(/\{%-?\s*generation\s*-?%\}/g, `{{- '${OPEN}' }}`)
    .replace(/\{%-?\s*endgeneration\s*-?%\}/g, `{{- '${CLOSE}' }}`);
  return [...applyChatTemplate(marked, row).matchAll(new RegExp(`${OPEN}([^${CLOSE}]*)${CLOSE}`, 'g'))].map(
    (m) => m[1],
  );
}

/** The decoded runs of masked tokens: what the model trained on, turn by turn. */
function maskedRuns(t: Pick<Trajectory, 'tokens' | 'assistant_mask'>, tokenizer: TextTokenizer): string[] {
  const runs: number[][] = [];
  t.tokens.forEach((id, i) => {
    if (!t.assistant_mask[i]) return;
    if (i === 0 || !t.assistant_mask[i - 1]) runs.push([]);
    runs[runs.length - 1].push(id);
  });
  return runs.map((r) => tokenizer.decode(r));
}

/** The row as a file holds it: JSONL written and read back. */
function asWritten(t: Trajectory): ChatRow {
  return parseChatJsonl(JSON.stringify(trajectoryToChatRow(t)), 'rows.jsonl')[0];
}

interface RenderCheck {
  bos_token?: string;
  eos_token?: string;
  /** Also check that Spindle's SFT of the row trains on the trajectory's tokens and mask (default true). */
  sft?: boolean;
}

/** The row as 🤗 datasets gives it back: arguments padded with keys of other calls, as nulls; absent tool_calls as null. */
function withNullArguments(row: ChatRow): ChatRow {
  const padded = row.messages.map((m) => ({
    ...m,
    tool_calls:
      m.tool_calls?.map((c) => ({
        ...c,
        function: {
          ...c.function,
          arguments: { command: null, path: null, ...(c.function.arguments as Record<string, unknown>) },
        },
      })) ?? null,
  }));
  return { ...row, messages: padded as unknown as ChatRow['messages'] };
}

function expectRowRendersAsTrained(
  source: string,
  t: Trajectory,
  tokenizer: TextTokenizer,
  check: RenderCheck = {},
): ChatRow {
  const row = asWritten(t);
  expect(applyChatTemplate(source, row, check)).toBe(tokenizer.decode(t.tokens));
  if (check.sft === false) return row;
  const sft = chatExample(row, tokenizer);
  expect(sft.tokens).toEqual(t.tokens);
  expect(Array.from(sft.mask)).toEqual(t.assistant_mask);
  return row;
}

describe("the shipped model's chat template on its exported chat JSONL", () => {
  it('is the one byte models are saved and merged with', () => {
    expect(SHIPPED.chat_template).toBe(byteTokenizerConfig().chat_template);
  });

  it("renders every built-in environment's expert episodes (calls, failed calls and retries, results) as trained; its generation spans are the mask", async () => {
    let calls = 0;
    let toolTurns = 0;
    for (const env of listEnvironments().filter((e) => e.expert)) {
      const episodes = await expertTranscripts(env, {
        perLevel: 2,
        difficulties: env.difficulties.slice(0, 2),
        tokenizer: bytes,
        baseSeed: 3,
      });
      for (const t of episodes) {
        const row = expectRowRendersAsTrained(SHIPPED.chat_template, t, bytes);
        expect(generationSpans(SHIPPED.chat_template, row)).toEqual(maskedRuns(t, bytes));
        // As 🤗 datasets hands rows to TRL: every call's arguments padded with the other tools' keys as nulls.
        expect(applyChatTemplate(SHIPPED.chat_template, withNullArguments(row))).toBe(bytes.decode(t.tokens));
        calls += row.messages.reduce((n, m) => n + (m.tool_calls?.length ?? 0), 0);
        toolTurns += t.messages.filter((m) => m.role === 'tool').length;
      }
    }
    // The experts call tools, and every call reached the row as a tool_call, not as text.
    expect(calls).toBeGreaterThan(40);
    expect(calls).toBeGreaterThanOrEqual(toolTurns);
  }, 120_000);

  it('keeps a turn the template would write differently as text, so the row still renders as sampled', async () => {
    const env = getEnvironment('arith_tool');
    const task = env.generate(1, 1, 'train');
    const expression = String(task.data.expression);
    const turns = [
      // Spaces in the JSON, and text after the call: neither is how the template writes tool_calls.
      `<think>calc</think>\n<tool_call>{"name": "calc", "arguments": {"expression": "${expression}"}}</tool_call>`,
      `<tool_call>{"name":"calc","arguments":{"expression":"${expression}"}}</tool_call> and then`,
      // Two calls in one turn, and a fraction json.dumps would write as 1e-05: the first lifts, the second stays text.
      `<tool_call>{"name":"calc","arguments":{"expression":"1+1"}}</tool_call>\n<tool_call>{"name":"calc","arguments":{"expression":"2"}}</tool_call>`,
      `<tool_call>{"name":"calc","arguments":{"expression":"2","scale":0.00001}}</tool_call>`,
      // A null argument, which the template leaves out (🤗 datasets fills absent keys with nulls).
      `<tool_call>{"name":"calc","arguments":{"expression":"2","unit":null}}</tool_call>`,
      String(task.data.answer),
    ];
    const t = await runEpisode({
      policy: new ScriptedPolicy({ turns, tokenizer: bytes }),
      env,
      task,
      seed: 1,
      maxSteps: turns.length,
    });
    expect(t.steps.length).toBe(6);
    const row = expectRowRendersAsTrained(SHIPPED.chat_template, t, bytes);
    const assistant = row.messages.filter((m) => m.role === 'assistant');
    expect(assistant.map((m) => m.tool_calls?.length ?? 0)).toEqual([0, 0, 2, 0, 0, 0]);
    expect(assistant[0].content).toBe(turns[0]);
    expect(generationSpans(SHIPPED.chat_template, row)).toEqual(maskedRuns(t, bytes));
  });

  it('renders what the shipped model sampled through `spindle collect` and `spindle export trajectories`', async () => {
    const dir = tempDir();
    for (const argv of [
      ['config', 'init', '--preset', 'demo'],
      ['config', 'set', 'group_size', '4'],
      ['collect', '--config', 'spindle.yaml', '--groups', '3'],
      ['export', 'trajectories', '--format', 'jsonl', '--split', 'all', '--output', 'out'],
      ['export', 'trajectories', '--format', 'parquet', '--output', 'out'],
    ]) {
      const r = await cli(dir, ...argv);
      expect(r.code, `${argv.join(' ')}: ${r.err}`).toBe(0);
    }
    const rows = parseChatJsonl(readFileSync(join(dir, 'out', 'trajectories.jsonl')), 'trajectories.jsonl');
    const sampled = new Map(
      (await parquetToTrajectories(readFileSync(join(dir, 'out', 'trajectories.parquet')), 'trajectories.parquet')).map(
        (t) => [t.id, t],
      ),
    );
    expect(rows).toHaveLength(12);
    // The shipped model's own tokenizer: what it sampled are its ids, whichever base is shipped.
    const { tokenizer: shippedTokenizer } = await loadHfModel(
      fileURLToPath(new URL('../../models/spindle-base', import.meta.url)),
    );
    for (const row of rows) {
      const t = sampled.get(row.id)!;
      expect(applyChatTemplate(SHIPPED.chat_template, row)).toBe(shippedTokenizer.decode(t.tokens));
      expect(generationSpans(SHIPPED.chat_template, row)).toEqual(maskedRuns(t, shippedTokenizer));
    }
  }, 120_000);

  it("lists a row's tools as Spindle's system prompt does when the row has none, or a system message of its own", () => {
    const calc: ToolSchema = {
      name: 'calc',
      description: 'Evaluate arithmetic',
      parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
    };
    const tools = [{ type: 'function' as const, function: calc }];
    const turns = [
      { role: 'user' as const, content: '2+2?' },
      { role: 'assistant' as const, content: '4' },
    ];
    for (const [system, instructions] of [
      [null, undefined],
      ['Answer with a number.', 'Answer with a number.'],
      [' Be brief.\n', ' Be brief.\n'],
    ] as const) {
      const messages = system === null ? turns : [{ role: 'system' as const, content: system }, ...turns];
      const expected = `<|im_start|>system\n${renderSystemPrompt([calc], { style: 'full', instructions }).content}<|im_end|>\n`;
      const text = applyChatTemplate(SHIPPED.chat_template, { messages, tools });
      expect(text).toBe(`${expected}<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n4<|im_end|>\n`);
      // Spindle's SFT of the same row renders the same text.
      expect(bytes.decode(chatExample({ messages, tools }, bytes).tokens)).toBe(text);
    }
  });
});

describe("each fixture family's template on its exported chat JSONL", () => {
  const env = getEnvironment('arith_tool');
  const task = env.generate(3, 1, 'test');
  const args = JSON.stringify({ expression: String(task.data.expression) }).replace('":"', '": "');
  const answer = String(task.data.answer);
  const cases = {
    'qwen2.5': { turns: [`<tool_call>\n{"name": "calc", "arguments": ${args}}\n</tool_call>`, answer], tools: true },
    qwen3: {
      turns: [
        `<think>\nUse calc.\n</think>\n\n<tool_call>\n{"name": "calc", "arguments": ${args}}\n</tool_call>`,
        `<think>\nIt says ${answer}.\n</think>\n\n${answer}`,
      ],
      tools: true,
    },
    'llama3.1': { turns: [`{"name": "calc", "parameters": ${args}}`, answer], tools: true },
    smollm2: { turns: [answer], tools: false },
  } as const;
  for (const [family, { turns, tools }] of Object.entries(cases) as [
    keyof typeof cases,
    (typeof cases)[keyof typeof cases],
  ][]) {
    it(`${family}: rows render as trained`, async () => {
      const tokenizer = familyTokenizer(family);
      const t = await runEpisode({
        policy: new ScriptedPolicy({ turns: [...turns], tokenizer }),
        env,
        task,
        seed: 1,
        maxSteps: 3,
        ...(tools ? {} : { tools: [] }),
      });
      expect(t.finish_reason).toBe('answer');
      const config = tokenizer.configJson as { bos_token?: string; eos_token?: string };
      // Spindle's SFT writes a row's tool_calls back as Hermes text, which the Llama codec does not read: only the template is checked there.
      const row = expectRowRendersAsTrained(familyTemplate(family), t, tokenizer, {
        bos_token: config.bos_token,
        eos_token: config.eos_token,
        sft: family !== 'llama3.1',
      });
      if (tools) expect(row.messages.find((m) => m.role === 'assistant')?.tool_calls).toHaveLength(1);
    });
  }
});
