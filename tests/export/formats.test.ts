import { describe, expect, it } from 'vitest';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { trajectoryToChatRow, chatRowToTrajectory, parseChatJsonl } from '../../src/export/hf-chat.ts';
import { toOpenAiMessages } from '../../src/format/openai-messages.ts';
import { toJsonl, jsonlChunks } from '../../src/export/jsonl.ts';
import { trajectoriesToParquet, parquetToTrajectories, PARQUET_COLUMNS } from '../../src/export/parquet.ts';
import {
  scoredGroupFromTrajectories,
  scoredGroupsToJsonl,
  parseScoredGroupsJsonl,
  ATROPOS_FIELDS,
} from '../../src/export/atropos.ts';
import { sftRowsFromGroup, dpoRowsFromGroup } from '../../src/export/pairs.ts';
import type { ChatMessage, ScoredGroup } from '../../src/contracts.ts';
import { makeTrajectory } from '../store/fixtures.ts';

describe('HF chat JSONL', () => {
  it('writes messages/tools in the chat-template shape with metadata columns, and reads them back', () => {
    const ts = [makeTrajectory(), makeTrajectory({ judge_score: null, success: null, split: 'test', run_id: null })];
    const text = toJsonl(ts.map((t) => trajectoryToChatRow(t)));
    const first = JSON.parse(text.split('\n')[0]);
    expect(Object.keys(first)).toEqual(
      expect.arrayContaining(['messages', 'tools', 'score', 'env', 'task_id', 'split']),
    );
    expect(first.tools[0]).toEqual({ type: 'function', function: ts[0].tools[0] });
    expect(first.messages.map((m: ChatMessage) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    // OpenAI/TRL form: the call in tool_calls (arguments an object), the result bare (the template wraps it).
    expect(first.messages[2]).toEqual({
      role: 'assistant',
      content: '<think>add them</think>',
      tool_calls: [
        {
          type: 'function',
          function: { name: 'calculator', arguments: { expression: expect.stringMatching(/^\d+\+2$/) } },
        },
      ],
    });
    expect(first.messages[3].content).toMatch(/^\d+$/);
    expect(text).not.toContain('<tool_response>');
    const rows = parseChatJsonl(text, 'chat.jsonl');
    expect(rows).toEqual(ts.map((t) => trajectoryToChatRow(t)));
    const back = chatRowToTrajectory(rows[1]);
    expect(back).toMatchObject({
      id: ts[1].id,
      tools: ts[1].tools,
      judge_score: null,
      split: 'test',
      env: ts[1].env,
      task_id: ts[1].task_id,
    });
    // Back in Hermes text: the same calls and results, in the canonical layout.
    expect(toOpenAiMessages(back.messages)).toEqual(toOpenAiMessages(ts[1].messages));
    expect(back.messages[3].content).toBe(`<tool_response>\n${rows[1].messages[3].content}\n</tool_response>`);
  });

  it('reads rows whose assistant content is null beside tool_calls and whose arguments are a JSON string', () => {
    const line = JSON.stringify({
      messages: [
        { role: 'user', content: 'q' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ type: 'function', function: { name: 'calc', arguments: '{"expression": "1+1"}' } }],
        },
        { role: 'tool', content: '2' },
      ],
    });
    const [row] = parseChatJsonl(line + '\n', 'x.jsonl');
    expect(row.messages[1]).toEqual({
      role: 'assistant',
      content: '',
      tool_calls: [{ type: 'function', function: { name: 'calc', arguments: { expression: '1+1' } } }],
    });
    expect(() =>
      parseChatJsonl(
        JSON.stringify({
          messages: [{ role: 'assistant', content: '', tool_calls: [{ function: { name: 'c', arguments: '[' } }] }],
        }),
        'y.jsonl',
      ),
    ).toThrow(/tool_calls\[0\] must be/);
  });

  it('accepts plain chat rows from other tools, filling Spindle columns with defaults', () => {
    const rows = parseChatJsonl(
      '{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]}\n',
      'ext.jsonl',
    );
    expect(rows[0]).toMatchObject({ id: 'ext.jsonl#1', score: null, split: 'train', tools: [] });
  });

  it('reads back every split an export writes with --split all, validation included', () => {
    const row = (split: string) =>
      `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}],"split":"${split}"}`;
    expect(
      parseChatJsonl(['train', 'validation', 'test'].map(row).join('\n'), 'all.jsonl').map((r) => r.split),
    ).toEqual(['train', 'validation', 'test']);
    expect(() => parseChatJsonl(row('dev'), 'x.jsonl')).toThrow(
      /split must be "train", "validation" or "test" \(got "dev"\)/,
    );
  });

  it('streams JSONL in chunks that concatenate to the whole file', async () => {
    const ts = Array.from({ length: 7 }, () => makeTrajectory());
    let text = '';
    for await (const chunk of jsonlChunks(ts, trajectoryToChatRow, 3)) text += chunk;
    expect(text).toBe(toJsonl(ts.map((t) => trajectoryToChatRow(t))));
  });
});

describe('Parquet', () => {
  it('round-trips trajectories exactly, in several row groups, from a stream', async () => {
    const ts = Array.from({ length: 25 }, (_, i) =>
      makeTrajectory({
        judge_score: i % 4 === 0 ? null : i / 25,
        final_response: i % 5 ? `r${i}` : null,
        seed: 2 ** 40 + i,
      }),
    );
    async function* stream() {
      yield* ts;
    }
    const bytes = await trajectoriesToParquet(stream(), 10);
    expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe('PAR1');
    expect(await parquetToTrajectories(bytes, 'out.parquet')).toEqual(ts);
  });

  it('is readable by hyparquet directly, with typed scalar columns and JSON text for nested data', async () => {
    const t = makeTrajectory();
    const bytes = await trajectoriesToParquet([t]);
    const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    const meta = parquetMetadata(buffer);
    expect(Number(meta.num_rows)).toBe(1);
    expect(meta.row_groups.length).toBe(1);
    expect(meta.key_value_metadata).toContainEqual({ key: 'spindle.schema', value: 'spindle.trajectory/1' });
    expect(meta.schema.slice(1).map((s) => s.name)).toEqual(PARQUET_COLUMNS.map((c) => c.name));
    const [row] = await parquetReadObjects({ file: buffer });
    expect(row.judge_score).toBe(0.75);
    expect(row.success).toBe(true);
    expect(row.n_steps).toBe(1);
    expect(Number(row.created_at)).toBe(t.created_at);
    expect(JSON.parse(row.messages as string)).toEqual(t.messages);
    expect(JSON.parse(row.tokens as string)).toEqual(t.tokens);
  });
});

describe('Atropos ScoredDataGroup JSONL', () => {
  const group = () => {
    const a = makeTrajectory({ judge_score: 1 });
    const b = makeTrajectory({ judge_score: 0 });
    return {
      a,
      b,
      scored: scoredGroupFromTrajectories([a, b], {
        advantages: [
          [1, 1, 1, 1, 1, 1],
          [-1, -1, -1, -1, -1, -1],
        ],
        env_id: 0,
      }),
    };
  };

  it('builds masks with -100 and logprob placeholders 1.0 off the policy tokens', () => {
    const { a, scored } = group();
    expect(scored.tokens[0]).toEqual(a.tokens);
    expect(scored.masks[0]).toEqual([-100, -100, 3, 4, -100, 6]);
    expect(scored.inference_logprobs![0]).toEqual([1, 1, -0.5, -0.25, 1, -1.5]);
    expect(scored.scores).toEqual([1, 0]);
    expect(scored.messages![0]).toEqual(a.messages);
  });

  it('writes the twelve field names exactly and reads them back', () => {
    const { scored } = group();
    const text = scoredGroupsToJsonl([scored, scored]);
    expect(Object.keys(JSON.parse(text.split('\n')[0]))).toEqual([...ATROPOS_FIELDS]);
    expect(parseScoredGroupsJsonl(text, 'groups.jsonl')).toEqual([scored, scored]);
  });

  it('accepts the minimal group Atropos itself posts (tokens, masks, scores only)', () => {
    const [g] = parseScoredGroupsJsonl('{"tokens":[[1,2]],"masks":[[-100,2]],"scores":[0.5]}', 'min.jsonl');
    expect(g).toMatchObject({ tokens: [[1, 2]], advantages: null, messages: null, env_id: null, images: null });
  });
});

describe('SFT and DPO pairs', () => {
  const conv = (answer: string): ChatMessage[] => [
    { role: 'user', content: 'q' },
    { role: 'assistant', content: answer },
  ];
  const group: ScoredGroup = {
    tokens: [[1], [2], [3], [4], [5]],
    masks: [[1], [2], [3], [4], [5]],
    scores: [0.2, 1, 0.9, -1, 0.5],
    advantages: null,
    ref_logprobs: null,
    messages: ['a', 'b', 'c', 'd', 'e'].map(conv),
    inference_logprobs: null,
    generation_params: null,
    overrides: null,
    group_overrides: null,
    images: null,
    env_id: null,
  };

  it('SFT keeps the top n per group, drops non-positive scores and applies the min gap', () => {
    expect(sftRowsFromGroup(group, { topN: 2 }).map((r) => [r.messages[1].content, r.score])).toEqual([
      ['b', 1],
      ['c', 0.9],
    ]);
    expect(sftRowsFromGroup(group, { topN: 9 }).map((r) => r.score)).toEqual([1, 0.9, 0.5, 0.2]);
    expect(sftRowsFromGroup(group, { topN: 9, allowNonPositive: true }).length).toBe(5);
    expect(sftRowsFromGroup(group, { topN: 9, minScoreGap: 1.6 }).map((r) => r.score)).toEqual([1, 0.9]);
  });

  it('DPO pairs each top sample with a lower one more than the gap below, with TRL prompt/chosen/rejected', () => {
    const rows = dpoRowsFromGroup(group, { topN: 3, minScoreGap: 0.5 });
    expect(rows.map((r) => [r.score, r.neg_score])).toEqual([
      [1, -1],
      [0.9, 0.2],
    ]);
    expect(rows[0].prompt).toEqual([{ role: 'user', content: 'q' }]);
    expect(rows[0].chosen).toEqual([{ role: 'assistant', content: 'b' }]);
    expect(rows[0].rejected).toEqual([{ role: 'assistant', content: 'd' }]);
    expect(rows[0].pos).toEqual(conv('b'));
    expect(dpoRowsFromGroup(group, { minScoreGap: 5 })).toEqual([]);
  });
});
