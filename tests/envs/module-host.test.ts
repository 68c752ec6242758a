import { afterAll, describe, expect, it } from 'vitest';
import { loadEnvironmentModule, type ModuleEnvironment } from '../../src/envs/module-env.ts';
import type { Trajectory } from '../../src/contracts.ts';

// A tool that keeps its thread busy for a while, with state the evaluation reads back.
const SPINNER = `export default {
  name: 'spinner', description: 'Spin the wheel, then say how often.', tags: ['test'], levels: [1, 2],
  sample(rng, level) { const n = rng.int(1, 1000); return { prompt: 'Spin ' + level + ' times (' + n + ')', data: { n, level } }; },
  init(task) { return { spins: 0 }; },
  tools: { spin: { description: 'Spins once.', parameters: {}, run(args, state) { const end = Date.now() + 300; while (Date.now() < end) {} state.spins++; return 'spun ' + state.spins; } } },
  evaluate(task, trajectory, state) { return state.spins === task.data.level ? 1 : 0; },
  expert(task) { return [...Array(task.data.level)].map(() => ({ tool: 'spin', args: {} })).concat(['done']); },
  chance(level) { return 0.01 * level; },
};`;

const opened: ModuleEnvironment[] = [];
async function load(thread?: 'host' | 'here') {
  const m = await loadEnvironmentModule(SPINNER, { thread });
  opened.push(m);
  return m;
}
afterAll(() => opened.forEach((m) => m.close()));

const spins = (n: number): Trajectory =>
  ({
    steps: Array.from({ length: n }, (_, i) => ({
      turn: i,
      tool_call: { tool_name: 'spin', parameters: {}, result: '', error: null },
    })),
  }) as unknown as Trajectory;

describe('environment modules in a host thread', () => {
  it('run off a Node main thread by default, drawing the tasks this thread would draw', async () => {
    const hosted = await load();
    const here = await load('here');
    expect(hosted.hosted).toBe(true);
    expect(here.hosted).toBe(false);
    for (const seed of [1, 2, 3])
      expect(hosted.env.generate(seed, 2, 'train')).toEqual(here.env.generate(seed, 2, 'train'));
    const task = hosted.env.generate(5, 2, 'train');
    expect(hosted.env.expert!(task)).toEqual(here.env.expert!(task));
    expect(hosted.env.chance(2)).toBe(0.02);
    expect(await hosted.env.evaluate(task, spins(2))).toBe(1);
    expect(await hosted.env.evaluate(task, spins(1))).toBe(0);
  });

  it('a tool that computes for a while leaves this thread free', async () => {
    const { env } = await load();
    const task = env.generate(1, 1, 'train');
    const session = await env.openTools!(task, { timeoutMs: 2000 });
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const first = await session.call('spin', {});
    clearInterval(timer);
    session.dispose();
    expect(first).toEqual({ result: 'spun 1', error: null });
    // 300 ms of guest work: in this thread no timer could fire until it ended.
    expect(ticks).toBeGreaterThan(5);
  });

  it('a closed module says so on every later call instead of waiting', async () => {
    const m = await load();
    const task = m.env.generate(1, 1, 'train');
    m.close();
    expect(() => m.env.generate(2, 1, 'train')).toThrow(/cannot run: the environment was closed/);
    await expect(m.env.evaluate(task, spins(1))).rejects.toThrow(/cannot run: the environment was closed/);
  });
});
