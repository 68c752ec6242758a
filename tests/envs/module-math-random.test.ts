/**
 * Math.random in an environment module throws, saying to draw from sample's rng: a task drawn from it
 * differs between two draws of one seed (the audit found tasks it could not look up again, and failed as
 * "cannot read property 'data' of null"). The module's line is the one named.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { loadEnvironmentModule, type ModuleEnvironment } from '../../src/envs/module-env.ts';

const opened: ModuleEnvironment[] = [];
afterAll(() => opened.forEach((m) => m.close()));

const MODULE = `export default {
  name: 'dice', description: 'roll', tags: ['test'],
  tools: { roll: { description: 'rolls a die', parameters: {}, run() { return String(1 + Math.floor(Math.random() * 6)); } } },
  sample(rng, level) {
    const a = Math.floor(Math.random() * 100);
    return { prompt: 'What is ' + a + '?', data: { a } };
  },
  evaluate(task, trajectory) { return 0; },
};`;

const NAMED =
  /Math\.random is not available in an environment module: the same seed must give the same task everywhere.*Draw in sample\(rng, level\) from its rng argument \(rng\.next\(\), rng\.int\(lo, hi\), rng\.pick\(items\), rng\.shuffle\(items\), rng\.chance\(p\)\)/;

describe('Math.random in an environment module', () => {
  it('sample using it fails by name at its line, pointing at the rng argument', async () => {
    const m = await loadEnvironmentModule(MODULE, { fileName: 'dice.js', thread: 'here' });
    opened.push(m);
    const error = (() => {
      try {
        m.env.generate(1, 1, 'train');
        return null;
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error?.message).toMatch(NAMED);
    expect(error?.message).toMatch(/\(dice\.js:5\)$/);
  });

  it('a tool using it answers the model with the same message', async () => {
    const m = await loadEnvironmentModule(MODULE.replace('Math.floor(Math.random() * 100)', 'rng.int(1, 99)'), {
      fileName: 'dice.js',
      thread: 'here',
    });
    opened.push(m);
    const task = m.env.generate(1, 1, 'train');
    const session = await m.env.openTools!(task, { timeoutMs: 2000 });
    const outcome = await session.call('roll', {});
    session.dispose();
    expect(outcome.result).toBe('');
    expect(outcome.error).toMatch(NAMED);
  });

  it('a module drawing from rng alone is unaffected', async () => {
    const m = await loadEnvironmentModule(MODULE.replace('Math.floor(Math.random() * 100)', 'rng.int(1, 99)'), {
      fileName: 'dice.js',
      thread: 'here',
    });
    opened.push(m);
    expect(m.env.generate(4, 1, 'train')).toEqual(m.env.generate(4, 1, 'train'));
  });
});
