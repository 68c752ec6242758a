/**
 * clarify_task: the request leaves details out on purpose; success asks about each missing one (and about
 * nothing the request states), then books all five right. Guessing without asking, copying the other
 * meeting's values, asking about every detail, asking "what is missing?", booking before asking, or
 * giving up after the designed failure (rooms booked by code) never succeeds.
 */
import { describe, expect, it } from 'vitest';
import type { Task } from '../../src/contracts.ts';
import { QUESTIONS, SLOTS } from '../../src/envs/data/clarify.ts';
import { callTurn } from '../../src/envs/expert-text.ts';
import { getEnvironment } from '../../src/envs/registry.ts';
import type { Booking, ClarifyData } from '../../src/envs/simulated-user.ts';
import { runEpisode } from '../../src/rollout/episode.ts';
import { expertTrajectory } from '../../src/rollout/expert.ts';
import { ScriptedPolicy } from '../../src/rollout/scripted-policy.ts';

const env = getEnvironment('clarify_task');
const ask = (question: string) => callTurn(null, [{ name: 'ask', arguments: { question } }]);
const book = (b: Booking) => callTurn(null, [{ name: 'book', arguments: { ...b } }]);

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

const data = (task: Task) => task.data as ClarifyData;

describe('clarify_task', () => {
  it('leaves out 1, 2, 2, 3 and 4 details: one question each, then the booking', async () => {
    const calls = [];
    for (const level of env.difficulties) {
      const task = itemAt(level, false);
      const t = await expertTrajectory(env, task);
      expect(t.judge_score).toBe(1);
      expect(t.steps.filter((s) => s.tool_call?.tool_name === 'ask')).toHaveLength(data(task).missing.length);
      calls.push(t.steps.length);
    }
    expect(calls).toEqual([2, 3, 3, 4, 5]);
  });

  it('fails a booking that guesses instead of asking, even a right guess', async () => {
    for (const level of env.difficulties) {
      const task = itemAt(level, false);
      const { facts, decoy } = data(task);
      // The true details, booked without a question: right by luck, still not the task.
      expect((await play(task, [book(facts), 'Booked.'])).score, `level ${level}`).toBe(0.5);
      // The other meeting's values where details are missing: what a guess from the request copies.
      if (level >= 3) {
        expect(Object.keys(decoy).length).toBeGreaterThan(0);
        expect((await play(task, [book({ ...facts, ...decoy }), 'Booked.'])).score, `level ${level}`).toBe(0);
      }
    }
  });

  it('fails asking about every detail blindly, though every answer then is known', async () => {
    for (const level of env.difficulties) {
      const task = itemAt(level, false);
      const questions = SLOTS.map((s) => ask(QUESTIONS[s]));
      const { trajectory, score } = await play(task, [...questions, book(data(task).facts), 'Booked.']);
      expect(trajectory.steps.some((s) => s.observation.includes('already says'))).toBe(true);
      expect(score, `level ${level}`).toBe(0.5);
    }
  });

  it('answers only a question that names one detail', async () => {
    const task = itemAt(2, false);
    const { trajectory } = await play(task, [
      ask('What is missing?'),
      ask('Which day and time?'),
      ask(task.prompt),
      'x',
    ]);
    expect(trajectory.steps.map((s) => s.tool_call!.error)).toEqual([
      expect.stringMatching(/does not know what you are asking/),
      expect.stringMatching(/one detail at a time/),
      expect.stringMatching(/one detail at a time/),
    ]);
    // Only the questions the user answered count: the missing details are still unknown.
    expect((await play(task, [ask('What is missing?'), book(data(task).facts), 'Booked.'])).score).toBe(0.5);
  });

  it('fails a booking made before the questions, and a booking cannot be redone', async () => {
    const task = itemAt(4, false);
    const { facts, missing } = data(task);
    const questions = missing.map((s) => ask(QUESTIONS[s]));
    expect((await play(task, [...questions, book(facts), 'Booked.'])).score).toBe(1);
    expect((await play(task, [book(facts), ...questions, 'Booked.'])).score).toBe(0.5);
    const wrongDay = facts.day === 'Monday' ? 'Tuesday' : 'Monday';
    const { trajectory, score } = await play(task, [
      book({ ...facts, day: wrongDay }),
      ...questions,
      book(facts),
      'Booked.',
    ]);
    expect(trajectory.steps.at(-1)!.tool_call!.error).toMatch(/already booked.*final/);
    expect(score).toBe(0);
  });

  it('builds recovery items whose first booking fails informatively, and a give-up fails', async () => {
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
      const { facts, roomCodes } = data(task);
      expect(failed[0].tool_call!.error).toContain(`books rooms by code`);
      expect(failed[0].tool_call!.error).toContain(`${roomCodes![facts.room]} (${facts.room})`);
      // Giving up after the failed booking.
      expect((await play(task, [...turns.slice(0, -2), turns.at(-1)!])).score).toBe(0.5);
    }
  });
});
