/**
 * The multi-step environments (file_chain, order_total, func_trace): success takes several dependent
 * calls, one more per level; stopping after the first observation, skipping a link, reading everything
 * at once, or giving up after the designed failure never succeeds; the designed failure is informative.
 */
import { describe, expect, it } from 'vitest';
import type { Task } from '../../src/contracts.ts';
import { getEnvironment } from '../../src/envs/registry.ts';
import type { Environment } from '../../src/envs/types.ts';
import { callTurn } from '../../src/envs/expert-text.ts';
import { runEpisode } from '../../src/rollout/episode.ts';
import { expertTrajectory } from '../../src/rollout/expert.ts';
import { ScriptedPolicy } from '../../src/rollout/scripted-policy.ts';

const MULTI_STEP = ['file_chain', 'order_total', 'func_trace'] as const;

async function play(env: Environment, task: Task, turns: string[]) {
  const trajectory = await runEpisode({
    policy: new ScriptedPolicy({ turns }),
    env,
    task,
    seed: 1,
    maxSteps: turns.length,
  });
  return { trajectory, score: await env.evaluate(task, trajectory) };
}

/** The first test item at a level whose `recovery` flag is `recovery`. */
function itemAt(env: Environment, level: number, recovery: boolean): Task {
  for (let seed = 0; ; seed++) {
    const task = env.generate(seed, level, 'test');
    if (task.data.recovery === recovery) return task;
  }
}

describe.each(MULTI_STEP)('%s', (name) => {
  const env = getEnvironment(name);

  it('needs one more dependent call per level: 2, 3, 4, 5, 6', async () => {
    const calls = [];
    for (const level of env.difficulties) {
      const t = await expertTrajectory(env, itemAt(env, level, false));
      expect(t.judge_score).toBe(1);
      calls.push(t.steps.length);
    }
    expect(calls).toEqual([2, 3, 4, 5, 6]);
  });

  it('fails an episode that stops early and answers with what it has seen', async () => {
    for (const level of [1, 3]) {
      const task = itemAt(env, level, false);
      const turns = env.expert!(task);
      const { trajectory } = await play(env, task, turns.slice(0, 1).concat('x'));
      const observed = trajectory.steps[0].observation.split(/\s+/).at(-1)!;
      // Answer with the last word of the first observation: the intermediate value.
      expect((await play(env, task, [turns[0], observed])).score).toBeLessThan(1);
      // Every call but the last one that reads or runs, then the right answer: the work is incomplete.
      expect((await play(env, task, [...turns.slice(0, -2), turns.at(-1)!])).score).toBe(0.5);
    }
  });

  it('fails an episode that reads every file at once instead of following them', async () => {
    const task = itemAt(env, 3, false);
    const files = Object.keys((task.data as { files: Record<string, string> }).files).sort();
    const turns = env.expert!(task);
    const readAll = callTurn(null, [{ name: 'sh', arguments: { command: `cat ${files.join(' ')}` } }]);
    // All files in one call, then the expert's computing call (if any) and the right answer.
    const last = turns.at(-2)!.includes('"sh"') ? [] : [turns.at(-2)!];
    expect((await play(env, task, [readAll, ...last, turns.at(-1)!])).score).toBe(0.5);
  });

  it('fails an episode that repeats a read-everything command once per link instead of following them', async () => {
    const chained = [];
    for (const level of env.difficulties) {
      const task = itemAt(env, level, false);
      const files = Object.keys((task.data as { files: Record<string, string> }).files).sort();
      const turns = env.expert!(task);
      // A level whose expert reads one file has no link to follow: dumping every file there is a search, not a skipped step.
      if (turns.filter((t) => t.includes('"sh"')).length < 2) continue;
      chained.push(level);
      const readAll = callTurn(null, [{ name: 'sh', arguments: { command: `cat ${files.join(' ')}` } }]);
      const last = turns.at(-2)!.includes('"sh"') ? [] : [turns.at(-2)!];
      // A listing, the same dump once per call the expert makes (and more), then the expert's last call and answer.
      const repeated = [
        callTurn(null, [{ name: 'sh', arguments: { command: 'ls -R' } }]),
        ...Array.from({ length: turns.length + 2 }, () => readAll),
      ];
      expect((await play(env, task, [...repeated, ...last, turns.at(-1)!])).score, `level ${level}`).toBe(0.5);
      // The same calls one file at a time in the expert's order still succeed: the rule refuses only reading ahead.
      expect((await play(env, task, turns)).score).toBe(1);
    }
    expect(chained.length).toBeGreaterThanOrEqual(4);
  });

  it('builds recovery items whose first attempt fails informatively, and a give-up fails', async () => {
    let recovering = 0;
    for (let seed = 0; seed < 60; seed++) if (env.generate(seed, 3, 'train').data.recovery === true) recovering++;
    expect(recovering).toBeGreaterThan(8); // about 30% of 60
    expect(recovering).toBeLessThan(30);

    const task = itemAt(env, 3, true);
    const turns = env.expert!(task);
    const expert = await expertTrajectory(env, task);
    expect(expert.judge_score).toBe(1);
    const failedAt = expert.steps.findIndex((s) => s.tool_call?.error);
    const error = expert.steps[failedAt].tool_call!.error!;
    expect(error).toMatch(name === 'func_trace' ? /ReferenceError: '\w+' is not defined/ : /No such file or directory/);
    // Giving up after the failure (answering right away) does not succeed.
    expect((await play(env, task, [...turns.slice(0, failedAt + 1), turns.at(-1)!])).score).toBeLessThan(1);
  });
});

it('order_total and func_trace need their second tool: without the calc/js call the answer is half credit', async () => {
  for (const name of ['order_total', 'func_trace']) {
    const env = getEnvironment(name);
    const task = itemAt(env, 2, false);
    const turns = env.expert!(task);
    expect((await play(env, task, [...turns.slice(0, -2), turns.at(-1)!])).score).toBe(0.5);
  }
});

it('order_total: a fixed rule (drop the plural s) finds no price of a recovery item; only the listing names its file', async () => {
  const env = getEnvironment('order_total');
  for (const level of [1, 3]) {
    const task = itemAt(env, level, true);
    const { pages, lines } = task.data as { pages: string[]; lines: { item: string; written: string }[] };
    const turns = env.expert!(task);
    const sh = (command: string) => callTurn(null, [{ name: 'sh', arguments: { command } }]);
    const singular = lines.map((l) => `prices/${l.written.replace(/s$/, '')}.txt`).join(' ');
    const finish = turns.at(-2)!.includes('"calc"') ? turns.slice(-2) : turns.slice(-1);
    const { trajectory, score } = await play(env, task, [
      ...pages.map((p) => sh(`cat ${p}`)),
      sh(`cat ${singular}`),
      ...finish,
    ]);
    expect(trajectory.steps[pages.length].tool_call!.error).toMatch(/No such file or directory/);
    expect(score).toBeLessThan(1);
  }
});
