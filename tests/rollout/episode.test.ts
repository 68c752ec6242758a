import { describe, expect, it } from 'vitest';
import { getEnvironment } from '../../src/envs/registry.ts';
import { renderChatML } from '../../src/format/index.ts';
import { runEpisode } from '../../src/rollout/episode.ts';
import type { EpisodeEvent } from '../../src/rollout/events.ts';
import { groupSeeds, runGroup } from '../../src/rollout/group.ts';
import type { Policy } from '../../src/rollout/policy.ts';
import { ScriptedPolicy } from '../../src/rollout/scripted-policy.ts';
import { charTokenizer } from './helpers.ts';

const arith = getEnvironment('arith_tool');
const task = arith.generate(3, 1, 'train');
const expression = String(task.data.expression);
const answer = String(task.data.answer);
const calcCall = (expr: string) => `<tool_call>{"name":"calc","arguments":{"expression":"${expr}"}}</tool_call>`;
const solve = [`<think>Use calc.</think>\n${calcCall(expression)}`, answer];

describe('runEpisode', () => {
  it('records a full trajectory: tool calls, observations, timings, messages, events', async () => {
    const events: EpisodeEvent[] = [];
    const t = await runEpisode({
      policy: new ScriptedPolicy({ turns: solve, pieceChars: 8 }),
      env: arith,
      task,
      seed: 5,
      groupId: 'g',
      runId: 'r',
      onEvent: (e) => events.push(e),
    });
    expect(t.finish_reason).toBe('answer');
    expect(t.final_response).toBe(answer);
    expect(t.steps).toHaveLength(1);
    const [step] = t.steps;
    expect(step).toMatchObject({ step_id: 0, turn: 0, thought: 'Use calc.', observation: answer });
    expect(step.tool_call).toMatchObject({
      tool_name: 'calc',
      parameters: { expression },
      result: answer,
      error: null,
    });
    expect(step.tool_call!.latency_ms).toBeGreaterThanOrEqual(0);
    expect(step.timestamp).toBeGreaterThan(1.7e9);
    expect(t.wall_time_seconds).toBeGreaterThan(0);
    expect(t.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
    expect(t.messages[0].content).toContain('calc(expression)');
    expect(t.messages[3].content).toBe(`<tool_response>\n${answer}\n</tool_response>`);
    expect(t.tools.map((s) => s.name)).toEqual(['calc']);
    expect(t).toMatchObject({
      task_id: task.id,
      task_description: task.prompt,
      model_id: 'scripted',
      env: 'arith_tool',
      split: 'train',
      difficulty: 1,
      seed: 5,
      group_id: 'g',
      run_id: 'r',
    });
    expect(t.tokens).toEqual([]);
    expect(t.judge_score).toBeNull();
    expect(await arith.evaluate(task, t)).toBe(1);

    const kinds = events.map((e) => e.type);
    expect(kinds[0]).toBe('turn_start');
    expect(kinds.filter((k) => k === 'text').length).toBeGreaterThan(1);
    expect(kinds.indexOf('tool_call')).toBeLessThan(kinds.indexOf('tool_result'));
    expect(kinds.at(-1)).toBe('done');
    const text = events
      .filter((e) => e.type === 'text' && e.turn === 0)
      .map((e) => (e as { piece: string }).piece)
      .join('');
    expect(text).toBe(solve[0]);
    // Plain data all the way: it survives structured clone.
    expect(structuredClone(t)).toEqual(t);
  });

  it('records a tool error as a step and carries on', async () => {
    const turns = [calcCall('2 +* x'), '<tool_call>{"name":"nope","arguments":{}}</tool_call>', answer];
    const t = await runEpisode({ policy: new ScriptedPolicy({ turns }), env: arith, task, seed: 1 });
    expect(t.finish_reason).toBe('answer');
    expect(t.steps).toHaveLength(2);
    expect(t.steps[0].tool_call!.error).toMatch(/calc/);
    expect(t.steps[0].observation).toMatch(/^error: /);
    expect(t.steps[1].tool_call!.error).toMatch(/unknown tool "nope"/);
    expect(t.messages[3].content).toContain('error:');
  });

  it('records a parse error as a step the model can read, not an exception', async () => {
    const turns = ['<think>go</think>\n<tool_call>{"name": "calc", "arguments": {"expression": </tool_call>', answer];
    const t = await runEpisode({ policy: new ScriptedPolicy({ turns }), env: arith, task, seed: 1 });
    expect(t.finish_reason).toBe('answer');
    expect(t.steps).toHaveLength(1);
    expect(t.steps[0].tool_call).toMatchObject({ tool_name: '', parameters: {}, result: '' });
    expect(t.steps[0].tool_call!.error).toMatch(/^parse error: /);
    expect(t.steps[0].thought).toBe('go');
    expect(t.steps[0].observation).toMatch(/^error: parse error/);
    expect(t.messages[3].role).toBe('tool');
  });

  it('runs several calls of one turn in order, one step each', async () => {
    const turns = [`${calcCall('1 + 1')}\n${calcCall('2 * 3')}`, '6'];
    const t = await runEpisode({ policy: new ScriptedPolicy({ turns }), env: arith, task, seed: 1 });
    expect(t.steps.map((s) => [s.turn, s.tool_call!.result])).toEqual([
      [0, '2'],
      [0, '6'],
    ]);
    expect(t.steps[1].thought).toBeNull();
    expect(t.messages[3].content).toBe('<tool_response>\n2\n</tool_response>\n<tool_response>\n6\n</tool_response>');
  });

  it('stops at maxSteps without a final answer', async () => {
    const t = await runEpisode({
      policy: new ScriptedPolicy({ turns: () => calcCall('1 + 1') }),
      env: arith,
      task,
      seed: 1,
      maxSteps: 3,
    });
    expect(t.finish_reason).toBe('max_steps');
    expect(t.final_response).toBeNull();
    expect(t.steps.map((s) => s.turn)).toEqual([0, 1, 2]);
    expect(await arith.evaluate(task, t)).toBe(0);
  });

  it('ends with finish_reason error when the policy fails', async () => {
    const broken: Policy = {
      id: 'broken',
      tokenizer: null,
      generate: () => Promise.reject(new Error('endpoint down')),
    };
    const t = await runEpisode({ policy: broken, env: arith, task, seed: 1 });
    expect(t.finish_reason).toBe('error');
    expect(t.steps[0]).toMatchObject({ tool_call: null, observation: 'policy error: endpoint down' });
  });

  it('reports a truncated final turn as max_tokens', async () => {
    const cut: Policy = {
      id: 'cut',
      tokenizer: null,
      generate: async () => ({ text: '<think>long', tokens: [], logprobs: [], finish_reason: 'length' }),
    };
    const t = await runEpisode({ policy: cut, env: arith, task, seed: 1 });
    expect(t.finish_reason).toBe('max_tokens');
  });

  it('stops a runaway tool at the per-call deadline', async () => {
    const env = getEnvironment('letter_count');
    const lc = env.generate(1, 1, 'train');
    const turns = ['<tool_call>{"name":"js","arguments":{"code":"while(true){}"}}</tool_call>', '0'];
    const t = await runEpisode({ policy: new ScriptedPolicy({ turns }), env, task: lc, seed: 1, toolTimeoutMs: 100 });
    expect(t.steps[0].tool_call!.error).toMatch(/interrupted|time/i);
    expect(t.finish_reason).toBe('answer');
  });

  it('throws when aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      runEpisode({
        policy: new ScriptedPolicy({ turns: solve }),
        env: arith,
        task,
        seed: 1,
        signal: controller.signal,
      }),
    ).rejects.toThrow();
  });
});

describe('token-level episodes', () => {
  const tokenizer = charTokenizer();

  for (const [label, turns, maxSteps] of [
    ['ends on an answer', solve, 4],
    ['ends at max_steps', [solve[0], solve[0]], 2],
    ['has a parse error', ['<tool_call>{"name": </tool_call>', answer], 4],
  ] as const) {
    it(`keeps tokens, mask, logprobs and turn spans consistent when it ${label}`, async () => {
      const t = await runEpisode({
        policy: new ScriptedPolicy({ turns: [...turns], tokenizer }),
        env: arith,
        task,
        seed: 9,
        maxSteps,
      });
      expect(t.assistant_mask).toHaveLength(t.tokens.length);
      expect(t.logprobs).toHaveLength(t.tokens.length);
      expect(t.token_count).toBe(t.tokens.length);
      // The ids are exactly the rendered conversation: no drift between turns.
      expect(tokenizer.decode(t.tokens)).toBe(renderChatML(t.messages));
      const assistants = t.messages.filter((m) => m.role === 'assistant');
      expect(t.turn_spans).toHaveLength(assistants.length);
      t.turn_spans.forEach(([start, end], i) => {
        expect(tokenizer.decode(t.tokens.slice(start, end))).toBe(`${assistants[i].content}<|im_end|>`);
        expect(t.assistant_mask.slice(start, end).every((m) => m === 1)).toBe(true);
      });
      const policyTokens = t.turn_spans.reduce((n, [s, e]) => n + e - s, 0);
      expect(t.assistant_mask.filter((m) => m === 1)).toHaveLength(policyTokens);
      t.logprobs.forEach((lp, i) => (t.assistant_mask[i] ? expect(lp).toBeLessThanOrEqual(0) : expect(lp).toBe(0)));
      expect(t.logprobs.some((lp) => lp < 0)).toBe(true);
    });
  }

  it('closes a turn cut by the token limit with prompt tokens', async () => {
    const cut: Policy = {
      id: 'cut',
      tokenizer,
      generate: async () => ({
        text: 'abc',
        tokens: tokenizer.encode('abc'),
        logprobs: [-1, -1, -1],
        finish_reason: 'length',
      }),
    };
    const t = await runEpisode({ policy: cut, env: arith, task, seed: 1 });
    expect(t.finish_reason).toBe('max_tokens');
    expect(tokenizer.decode(t.tokens)).toBe(renderChatML(t.messages));
    expect(t.assistant_mask.slice(-2)).toEqual([0, 0]); // '<|im_end|>' and '\n' were not sampled
  });

  it('gives the policy the token prefix that ends with the assistant header', async () => {
    const prefixes: number[][] = [];
    const policy = new ScriptedPolicy({
      tokenizer,
      turns: (ctx, turn) => {
        prefixes.push(ctx.tokens);
        return solve[turn];
      },
    });
    await runEpisode({ policy, env: arith, task, seed: 1 });
    expect(prefixes).toHaveLength(2);
    for (const p of prefixes) expect(tokenizer.decode(p).endsWith('<|im_start|>assistant\n')).toBe(true);
  });

  it('replays: same seed → same tokens and logprobs', async () => {
    const run = (seed: number) =>
      runEpisode({ policy: new ScriptedPolicy({ turns: solve, tokenizer }), env: arith, task, seed });
    const [a, b, c] = await Promise.all([run(4), run(4), run(5)]);
    expect(b.tokens).toEqual(a.tokens);
    expect(b.logprobs).toEqual(a.logprobs);
    expect(c.logprobs).not.toEqual(a.logprobs);
  });

  it('refuses a tokenizer policy that returns text without tokens', async () => {
    const bad: Policy = {
      id: 'bad',
      tokenizer,
      generate: async () => ({ text: 'hi', tokens: [], logprobs: [], finish_reason: 'stop' }),
    };
    await expect(runEpisode({ policy: bad, env: arith, task, seed: 1 })).rejects.toThrow(/text without tokens/);
  });
});

describe('runGroup', () => {
  it('runs n samples sharing a group id with distinct derived seeds', async () => {
    const seen: number[] = [];
    const group = await runGroup({
      policy: new ScriptedPolicy({ turns: solve }),
      env: arith,
      task,
      n: 4,
      baseSeed: 77,
      concurrency: 2,
      onEvent: (i, e) => e.type === 'done' && seen.push(i),
    });
    expect(group).toHaveLength(4);
    expect(new Set(group.map((t) => t.group_id)).size).toBe(1);
    expect(group.map((t) => t.seed)).toEqual(groupSeeds(77, task.id, 4));
    expect(new Set(group.map((t) => t.seed)).size).toBe(4);
    expect(new Set(group.map((t) => t.id)).size).toBe(4);
    expect(seen.sort()).toEqual([0, 1, 2, 3]);
    const again = await runGroup({
      policy: new ScriptedPolicy({ turns: solve }),
      env: arith,
      task,
      n: 2,
      baseSeed: 77,
      groupId: 'fixed',
    });
    expect(again.map((t) => t.seed)).toEqual(group.slice(0, 2).map((t) => t.seed));
    expect(again[0].group_id).toBe('fixed');
  });

  it('validates n', async () => {
    await expect(
      runGroup({ policy: new ScriptedPolicy({ turns: solve }), env: arith, task, n: 0, baseSeed: 1 }),
    ).rejects.toThrow(/positive integer/);
  });
});
