/** Environment-specific scoring rules and the shared answer helpers. */
import { describe, expect, it } from 'vitest';
import type { Task } from '../../src/contracts.ts';
import { cleanAnswer, extractCode, integerAnswer } from '../../src/envs/answer.ts';
import { getEnvironment } from '../../src/envs/registry.ts';
import { answerMatches, normalizePath } from '../../src/envs/state-check.ts';
import { runEpisode } from '../../src/rollout/episode.ts';
import { ScriptedPolicy } from '../../src/rollout/scripted-policy.ts';
import { fakeTrajectory } from '../rollout/helpers.ts';

async function score(envName: string, task: Task, turns: string[]): Promise<number | null> {
  const env = getEnvironment(envName);
  const t = await runEpisode({ policy: new ScriptedPolicy({ turns }), env, task, seed: 1, maxSteps: turns.length });
  return env.evaluate(task, t);
}

describe('answer helpers', () => {
  it('reads numbers, cleans labels and quotes, finds code and paths', () => {
    expect(integerAnswer('The answer is 1,234.')).toBe(1234);
    expect(integerAnswer('-17')).toBe(-17);
    expect(integerAnswer('none')).toBeNull();
    // The whole answer is compared: a list of guesses answers nothing.
    expect(integerAnswer('1 2 3 4 5')).toBeNull();
    expect(integerAnswer('12,34')).toBeNull();
    expect(cleanAnswer("Answer: 'olleh'.")).toBe('olleh');
    expect(cleanAnswer('`abc`')).toBe('abc');
    expect(extractCode('Here:\n```js\nfunction f() {}\n```\nDone')).toBe('function f() {}');
    expect(extractCode('function f() {}')).toBe('function f() {}');
    expect(normalizePath('./src/a.txt')).toBe('src/a.txt');
    expect(normalizePath('/src/a.txt')).toBe('src/a.txt');
    const check = { type: 'path' as const, value: 'src/a.txt' };
    expect(answerMatches(fakeTrajectory({ final_response: './src/a.txt' }), check)).toBe(true);
    // The whole answer is compared: a tool's output echoed back is not an answer.
    expect(answerMatches(fakeTrajectory({ final_response: 'modified: src/a.txt' }), check)).toBe(false);
    expect(answerMatches(fakeTrajectory({ final_response: 'src/b.txt' }), check)).toBe(false);
  });
});

describe('arith_tool', () => {
  const env = getEnvironment('arith_tool');

  it('level 1 is a + b with numbers below 100', () => {
    for (let s = 0; s < 200; s++) {
      const { expression } = env.generate(s, 1, 'train').data as { expression: string };
      const m = /^(\d+) \+ (\d+)$/.exec(expression);
      expect(m, expression).not.toBeNull();
      expect(Number(m![1])).toBeLessThan(100);
      expect(Number(m![2])).toBeLessThan(100);
    }
  });

  it('higher levels use more operands', () => {
    const operands = (level: number) =>
      (String(env.generate(1, level, 'train').data.expression).match(/\d+/g) ?? []).length;
    expect(operands(5)).toBeGreaterThan(operands(1));
  });

  it('gives partial credit for a correct answer without a tool call', async () => {
    const task = env.generate(2, 1, 'train');
    expect(await score('arith_tool', task, [String(task.data.answer)])).toBe(0.5);
  });
});

describe('countdown', () => {
  const env = getEnvironment('countdown');
  const task: Task = {
    ...env.generate(0, 3, 'train'),
    data: { numbers: [2, 3, 5, 7], target: 29, solution: '3 * 7 + 2 * 5 - 2' },
  };

  const checked = (expression: string) =>
    `<tool_call>{"name":"calc","arguments":{"expression":"${expression}"}}</tool_call>`;

  it('accepts any exact expression over the given numbers, half without a calc check', async () => {
    expect(await score('countdown', task, [checked('5 * 7 - 3 * 2'), '5 * 7 - 3 * 2'])).toBe(1);
    expect(await score('countdown', task, ['5 * 7 - 3 * 2'])).toBe(0.5);
    expect(await score('countdown', task, ['`(7 - 2) * 5 + 3 + 2` wait'])).toBe(0);
    expect(await score('countdown', task, ['3 * 7 + 5 + 3 = 29'])).toBe(0); // 3 used twice
    expect(await score('countdown', task, [checked('7 * 5 - 3 * 2'), '7 * 5 - 3 * 2 = 29'])).toBe(1);
    expect(await score('countdown', task, ['29'])).toBe(0); // 29 is not a given number
    expect(await score('countdown', task, ['(7 + 2 * 3) * 2 +'])).toBe(0);
  });

  it('does not count a calc check of an expression that breaks the rules', async () => {
    // 3 * 7 + 5 + 3 is 29 but uses 3 twice: calc says 29, the check does not count.
    expect(await score('countdown', task, [checked('3 * 7 + 5 + 3'), '5 * 7 - 3 * 2'])).toBe(0.5);
  });
});

describe('js_debug', () => {
  const env = getEnvironment('js_debug');

  it('gives partial credit when some hidden tests pass', async () => {
    const task: Task = {
      ...env.generate(0, 1, 'train'),
      data: { fn: 'isEven', fixed: 'function isEven(n) {\n  return n % 2 === 0;\n}', tests: [[0], [1], [2], [7]] },
    };
    const tried =
      '<tool_call>{"name":"js","arguments":{"code":"function isEven(n) { return n % 2 === 0; } isEven(4)"}}</tool_call>';
    expect(await score('js_debug', task, [tried, '```js\nfunction isEven(n) { return n % 2 === 0; }\n```'])).toBe(1);
    expect(await score('js_debug', task, ['```js\nfunction isEven(n) { return n % 2 === 0; }\n```'])).toBe(0.5); // not tried
    expect(await score('js_debug', task, [tried, '```js\nfunction isEven(n) { return n === 0; }\n```'])).toBe(0.75);
    expect(await score('js_debug', task, ['```js\nfunction isEven(n) { while (true) {} }\n```'])).toBe(0);
    expect(await score('js_debug', task, ['```js\nfunction isEven(n) { return n %\n```'])).toBe(0);
    expect(await score('js_debug', task, ['I could not fix it.'])).toBe(0);
  });
});

describe('state-checked tasks replay the trajectory', () => {
  it('shell_exec: a file created in a different place does not count', async () => {
    const env = getEnvironment('shell_exec');
    const task = Array.from({ length: 60 }, (_, s) => env.generate(s, 1, 'train')).find(
      (t) => t.data.kind === 'create_file',
    )!;
    const expected = task.data.expectFiles as Record<string, string>;
    const [file, word] = Object.entries(expected)[0];
    const call = (cmd: string) => `<tool_call>{"name":"sh","arguments":{"command":"${cmd}"}}</tool_call>`;
    expect(await score('shell_exec', task, [call(`echo ${word} > ${file}`), 'Done.'])).toBe(1);
    expect(await score('shell_exec', task, [call(`echo ${word} > other-${file}`), 'Done.'])).toBe(0);
    expect(await score('shell_exec', task, [call(`echo wrong > ${file}`), 'Done.'])).toBe(0);
  });

  it('git_repo: committing with another message does not count', async () => {
    const env = getEnvironment('git_repo');
    const task = Array.from({ length: 60 }, (_, s) => env.generate(s, 2, 'train')).find(
      (t) => t.data.kind === 'commit_file',
    )!;
    const turns = env.expert!(task);
    expect(await score('git_repo', task, turns)).toBe(1);
    const wrong = turns[0].replace(/commit -m \\"[^\\]*\\"/, 'commit -m \\"other\\"');
    expect(wrong).not.toBe(turns[0]);
    expect(await score('git_repo', task, [wrong, 'Done.'])).toBe(0);
  });
});

describe('shell_exec read_file', () => {
  it('counts only a read of the asked file: a dump of every file shows the word without saying which file it came from', async () => {
    const env = getEnvironment('shell_exec');
    let task: Task | null = null;
    for (let seed = 0; task === null; seed++) {
      const t = env.generate(seed, 1, 'test');
      if (t.data.kind === 'read_file') task = t;
    }
    const { files, reply } = task.data as { files: Record<string, string>; reply: string };
    const target = (task.data as { answer: { target: string } }).answer.target;
    const call = (command: string) =>
      `<tool_call>${JSON.stringify({ name: 'sh', arguments: { command } })}</tool_call>`;
    expect(await score('shell_exec', task, [call(`cat ${target}`), reply])).toBe(1);
    expect(await score('shell_exec', task, [call(`cat ${Object.keys(files).sort().join(' ')}`), reply])).toBe(0.5);
  });
});
