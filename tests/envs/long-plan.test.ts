/**
 * long_plan: a route of calc and sh calls, each argument shown only by the observation before it, two calls
 * per locker (4 to 12 at levels 1–5); the designed failure (a note writes a product with ×) is informative
 * and a give-up after it fails; reading every locker at once, skipping calc, stopping early or answering
 * a dead end's word never succeeds.
 */
import { describe, expect, it } from 'vitest';
import type { Task } from '../../src/contracts.ts';
import { callTurn } from '../../src/envs/expert-text.ts';
import type { LongPlanData } from '../../src/envs/long-plan.ts';
import { getEnvironment } from '../../src/envs/registry.ts';
import { runEpisode } from '../../src/rollout/episode.ts';
import { expertTrajectory } from '../../src/rollout/expert.ts';
import { ScriptedPolicy } from '../../src/rollout/scripted-policy.ts';

const env = getEnvironment('long_plan');
const sh = (command: string) => callTurn(null, [{ name: 'sh', arguments: { command } }]);
const calc = (expression: string) => callTurn(null, [{ name: 'calc', arguments: { expression } }]);

async function play(task: Task, turns: string[]) {
  const trajectory = await runEpisode({
    policy: new ScriptedPolicy({ turns }),
    env,
    task,
    seed: 1,
    maxSteps: turns.length,
  });
  return { trajectory, score: await env.evaluate(task, trajectory) };
}

function itemAt(level: number, recovery: boolean): Task {
  for (let seed = 0; ; seed++) {
    const task = env.generate(seed, level, 'test');
    if (task.data.recovery === recovery) return task;
  }
}

const data = (task: Task) => task.data as LongPlanData;

describe('long_plan', () => {
  it('takes two dependent calls per locker: 4, 6, 8, 10 and 12 calls', async () => {
    const calls = [];
    for (const level of env.difficulties) {
      const t = await expertTrajectory(env, itemAt(level, false));
      expect(t.judge_score).toBe(1);
      calls.push(t.steps.length);
    }
    expect(calls).toEqual([4, 6, 8, 10, 12]);
  });

  it('fails a route that reads every locker at once, even repeated once per step', async () => {
    for (const level of [3, 5]) {
      const task = itemAt(level, false);
      const { route, word } = data(task);
      const dump = sh(`cat ${Object.keys(data(task).files).sort().join(' ')}`);
      // Every calc in order, each followed by the same dump: the reads met nothing, as each dump reads ahead.
      const turns = route.flatMap((stop) => [calc(stop.written), dump]);
      expect((await play(task, [...turns, word])).score, `level ${level}`).toBe(0.5);
      // The same calls reading one locker at a time succeed: only reading ahead is refused.
      expect(
        (await play(task, [...route.flatMap((stop) => [calc(stop.written), sh(`cat lockers/${stop.n}.txt`)]), word]))
          .score,
      ).toBe(1);
    }
  });

  it('fails a route that works the numbers out without calc', async () => {
    const task = itemAt(4, false);
    const { route, word } = data(task);
    expect((await play(task, [...route.map((stop) => sh(`cat lockers/${stop.n}.txt`)), word])).score).toBe(0.5);
    // One calc skipped is enough to fail.
    const turns = route.flatMap((stop, i) => [
      ...(i === 2 ? [] : [calc(stop.written)]),
      sh(`cat lockers/${stop.n}.txt`),
    ]);
    expect((await play(task, [...turns, word])).score).toBe(0.5);
  });

  it('fails an episode that stops early, or answers a dead end', async () => {
    const task = itemAt(3, false);
    const turns = env.expert!(task);
    const { trajectory } = await play(task, [...turns.slice(0, 2), 'x']);
    // The word after "next:" is the intermediate step, not the answer.
    expect((await play(task, [...turns.slice(0, 2), trajectory.steps[1].observation.split(/\s+/).at(-1)!])).score).toBe(
      0,
    );
    expect((await play(task, [...turns.slice(0, -3), turns.at(-1)!])).score).toBe(0.5);
    const { files, word } = data(task);
    const deadEnds = Object.values(files).flatMap((f) =>
      f.startsWith('word: ') && !f.includes(word) ? [f.slice(6).trim()] : [],
    );
    expect(deadEnds.length).toBeGreaterThan(0);
    expect((await play(task, [...turns.slice(0, -1), deadEnds[0]])).score).toBe(0.5);
  });

  it('builds recovery items whose first attempt fails informatively; a give-up or a guess after it fails', async () => {
    let recovering = 0;
    for (let seed = 0; seed < 60; seed++) if (env.generate(seed, 3, 'train').data.recovery === true) recovering++;
    expect(recovering).toBeGreaterThan(8); // about 30% of 60
    expect(recovering).toBeLessThan(30);

    for (const level of [1, 5]) {
      const task = itemAt(level, true);
      const turns = env.expert!(task);
      const expert = await expertTrajectory(env, task);
      expect(expert.judge_score).toBe(1);
      const failed = expert.steps.filter((s) => s.tool_call?.error);
      expect(failed).toHaveLength(1);
      expect(failed[0].tool_call!.error).toMatch(/unexpected character '×'.*use \* to multiply/);
      const at = expert.steps.indexOf(failed[0]);
      // Giving up after the failure and answering with the word the expert found.
      expect((await play(task, [...turns.slice(0, at + 1), turns.at(-1)!])).score).toBe(0.5);
      // Reading the next locker with the number worked out in the head, not by the corrected call.
      expect((await play(task, [...turns.slice(0, at + 1), ...turns.slice(at + 2)])).score).toBe(0.5);
    }
  });
});
