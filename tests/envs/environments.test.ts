/**
 * Every built-in environment: the scripted expert scores 1.0 on every generated item (solvability),
 * wrong answers score below 1, train/test splits are disjoint, and the same seed gives the same item.
 * Items per level: 100, except git_repo and repo_fix (25: every item builds an isomorphic-git repository,
 * twice when the answer is a repository change, ~65 ms per item on the shared CI cores) and the multi-step
 * environments (40: an item is up to thirteen calls). Where an item is built so that the first attempt
 * fails (`data.recovery`), the expert's failed call is the designed one and the episode still succeeds.
 */
import { describe, expect, it } from 'vitest';
import type { Task } from '../../src/contracts.ts';
import { listEnvironments } from '../../src/envs/registry.ts';
import type { Environment } from '../../src/envs/types.ts';
import { runEpisode } from '../../src/rollout/episode.ts';
import { expertTrajectory } from '../../src/rollout/expert.ts';
import { ScriptedPolicy } from '../../src/rollout/scripted-policy.ts';

const ITEMS_PER_LEVEL: Record<string, number> = {
  git_repo: 25,
  repo_fix: 25,
  file_chain: 40,
  order_total: 40,
  func_trace: 40,
  clarify_task: 40,
  long_plan: 40,
};
const BUILTINS = [
  'arith_tool',
  'clarify_task',
  'countdown',
  'file_chain',
  'func_trace',
  'git_repo',
  'js_debug',
  'letter_count',
  'long_plan',
  'order_total',
  'repo_fix',
  'shell_exec',
  'text_reverse',
];

/** A plausible but wrong final answer for the item, or null when the item is judged on state only. */
function nearMiss(task: Task): string | null {
  const d = task.data as Record<string, unknown>;
  switch (task.env) {
    case 'arith_tool':
    case 'letter_count':
      return String((d.answer as number) + 1);
    case 'text_reverse':
      return `${String(d.answer)}x`;
    case 'countdown':
      return `${String(d.solution)} + 1`;
    case 'js_debug':
      return `\`\`\`js\n${String(d.buggy)}\n\`\`\``;
    case 'file_chain':
      return `${String(d.word)}s`;
    case 'order_total':
      return String((d.total as number) + 1);
    case 'func_trace':
      return String((d.answer as number) + 1);
    case 'long_plan':
      return `${String(d.word)}s`;
    default: {
      const answer = d.answer as { type: string; value: string | number } | undefined;
      if (!answer) return null;
      return answer.type === 'int'
        ? String((answer.value as number) + 1)
        : answer.type === 'path'
          ? 'nowhere/none.txt'
          : 'nothing';
    }
  }
}

async function scoreScript(env: Environment, task: Task, turns: string[]): Promise<number | null> {
  const trajectory = await runEpisode({
    policy: new ScriptedPolicy({ turns }),
    env,
    task,
    seed: 1,
    maxSteps: turns.length,
  });
  return env.evaluate(task, trajectory);
}

it('ships the thirteen environments', () => {
  expect(listEnvironments().map((e) => e.name)).toEqual(BUILTINS);
});

describe.each(BUILTINS)('%s', (name) => {
  const env = listEnvironments().find((e) => e.name === name)!;
  const n = ITEMS_PER_LEVEL[name] ?? 100;

  it.each(env.difficulties.map((d) => [d]))(
    `expert scores 1.0 on ${n} items at level %i, with no failed tool call`,
    async (level) => {
      for (let seed = 0; seed < n; seed++) {
        const task = env.generate(seed, level, seed % 2 === 0 ? 'train' : 'test');
        const t = await expertTrajectory(env, task);
        const failed = t.steps.filter((s) => s.tool_call?.error);
        if (task.data.recovery === true) expect(failed.length, `${task.id}: the designed failure`).toBe(1);
        else expect(failed, `${task.id}: ${task.prompt}`).toEqual([]);
        expect(t.finish_reason).toBe('answer');
        expect(t.steps.length).toBeGreaterThan(0);
        expect(t.judge_score, `${task.id}: ${task.prompt}\n${JSON.stringify(t.messages.slice(2))}`).toBe(1);
      }
    },
  );

  it('scores wrong answers below 1', async () => {
    for (const level of env.difficulties) {
      for (let seed = 0; seed < 4; seed++) {
        const task = env.generate(seed, level, 'train');
        // No tool call and no answer: nothing solved, nothing changed.
        expect(await scoreScript(env, task, ["I don't know."]), task.id).toBeLessThan(1);
        // The right answer without the tool call that found it (the base model's direct-answer transcripts count on this).
        expect(
          await scoreScript(env, task, [env.expert!(task).at(-1)!]),
          `${task.id} answered without a tool`,
        ).toBeLessThan(1);
        // The expert's tool calls, then a near-miss answer.
        const miss = nearMiss(task);
        if (miss !== null) {
          const turns = env.expert!(task);
          expect(
            await scoreScript(env, task, [...turns.slice(0, -1), miss]),
            `${task.id} answered ${miss}`,
          ).toBeLessThan(1);
        }
      }
    }
  });

  it('keeps train and test items disjoint', () => {
    for (const level of env.difficulties) {
      const keys = { train: new Set<string>(), test: new Set<string>() };
      for (let seed = 0; seed < 60; seed++) {
        for (const split of ['train', 'test'] as const) {
          const task = env.generate(seed, level, split);
          expect(task.split).toBe(split);
          expect(env.splitOf(String(task.data.item_key))).toBe(split);
          keys[split].add(String(task.data.item_key));
        }
      }
      const overlap = [...keys.train].filter((k) => keys.test.has(k));
      expect(overlap, `level ${level}`).toEqual([]);
      expect(keys.test.size, `level ${level} has test variety`).toBeGreaterThan(1);
    }
  });

  it('gives the same item for the same seed, and different items for different seeds', () => {
    for (const level of env.difficulties) {
      const a = env.generate(123, level, 'train');
      expect(env.generate(123, level, 'train')).toEqual(a);
      expect(a.id).toBe(`${name}/train/${level}/123`);
      const prompts = new Set(
        Array.from({ length: 10 }, (_, s) => JSON.stringify(env.generate(s, level, 'train').data)),
      );
      expect(prompts.size).toBeGreaterThan(1);
    }
  });

  it('has short prompts and a complete description', () => {
    expect(env.description.length).toBeGreaterThan(10);
    expect(env.tags.length).toBeGreaterThan(0);
    expect(env.difficulties).toEqual([1, 2, 3, 4, 5]);
    for (const level of env.difficulties)
      expect(env.generate(5, level, 'train').prompt.length).toBeLessThan(name === 'js_debug' ? 400 : 160);
  });
});
