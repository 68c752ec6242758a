import { afterEach, describe, expect, it } from 'vitest';
import { defineEnvironment, EnvironmentSpecError, validateEnvironmentSpec } from '../../src/envs/define.ts';
import {
  describeEnvironments,
  getEnvironment,
  hasEnvironment,
  listEnvironments,
  listTags,
  registerEnvironment,
  unregisterEnvironment,
} from '../../src/envs/registry.ts';
import type { EnvironmentSpec } from '../../src/envs/types.ts';
import { runEpisode } from '../../src/rollout/episode.ts';
import { expertTrajectory } from '../../src/rollout/expert.ts';
import { ScriptedPolicy } from '../../src/rollout/scripted-policy.ts';

/** A community task spec: name the capital letter count of a word. */
const capsSpec: EnvironmentSpec = {
  name: 'caps_count',
  description: 'Count capital letters in a word.',
  tags: ['text', 'community'],
  difficulties: [1, 2],
  requiredTools: [],
  sample: (rng, difficulty) => {
    const word = Array.from({ length: 4 + difficulty * 2 }, () => (rng.chance(0.5) ? 'A' : 'b')).join('');
    return {
      prompt: `How many capitals in ${word}?`,
      data: { word, answer: word.replace(/[^A-Z]/g, '').length },
      key: word,
    };
  },
  evaluate: (task, t) => (Number(t.final_response) === task.data.answer ? 1 : 0),
  expert: (task) => [String(task.data.answer)],
};

afterEach(() => {
  if (hasEnvironment('caps_count')) unregisterEnvironment('caps_count');
});

describe('registry', () => {
  it('lists and filters environments by tag (spindle envs --tag shell)', () => {
    expect(listEnvironments({ tag: 'shell' }).map((e) => e.name)).toEqual([
      'file_chain',
      'git_repo',
      'long_plan',
      'order_total',
      'repo_fix',
      'shell_exec',
    ]);
    expect(listEnvironments({ tag: 'math' }).map((e) => e.name)).toEqual(['arith_tool', 'countdown']);
    expect(listEnvironments({ tag: 'no-such-tag' })).toEqual([]);
    expect(listTags()).toContain('git');
    const info = describeEnvironments({ tag: 'git' });
    expect(info).toEqual([
      {
        name: 'git_repo',
        description: expect.any(String),
        tags: ['git', 'shell', 'tool-use'],
        difficulties: [1, 2, 3, 4, 5],
        requiredTools: ['sh', 'git'],
      },
      {
        name: 'repo_fix',
        description: expect.any(String),
        tags: ['code', 'git', 'shell', 'files', 'multi-step', 'multi-tool', 'tool-use', 'curriculum-4'],
        difficulties: [1, 2, 3, 4, 5],
        requiredTools: ['sh', 'js', 'git'],
      },
    ]);
    expect(structuredClone(info)).toEqual(info);
  });

  it('gets by name, and an unknown name lists the known ones', () => {
    expect(getEnvironment('countdown').name).toBe('countdown');
    expect(() => getEnvironment('bash_exec_env')).toThrow(
      /Unknown environment "bash_exec_env". Known environments: arith_tool, clarify_task, countdown, file_chain, func_trace, git_repo/,
    );
  });

  it('registers a user-defined environment at run time and runs its expert', async () => {
    const env = registerEnvironment(capsSpec);
    expect(getEnvironment('caps_count')).toBe(env);
    expect(listEnvironments({ tag: 'community' }).map((e) => e.name)).toEqual(['caps_count']);
    expect(env.systemStyle).toBe('compact');
    const task = env.generate(1, 2, 'test');
    expect(task.id).toBe('caps_count/test/2/1');
    const t = await expertTrajectory(env, task);
    expect(t.judge_score).toBe(1);
    expect(t.success).toBe(true);
    expect(() => env.generate(1, 3, 'train')).toThrow(/difficulty 3 is not offered; choose one of 1, 2/);
  });

  it('refuses duplicates unless replacing, and never replaces a built-in', () => {
    registerEnvironment(capsSpec);
    expect(() => registerEnvironment(capsSpec)).toThrow(/already registered; pass \{ replace: true \}/);
    expect(registerEnvironment({ ...capsSpec, description: 'v2 of the task' }, { replace: true }).description).toBe(
      'v2 of the task',
    );
    expect(() => registerEnvironment({ ...capsSpec, name: 'arith_tool' })).toThrow(/built-in/);
    expect(() => unregisterEnvironment('arith_tool')).toThrow(/built-in/);
  });

  it('says everything that is missing or wrong in a spec', () => {
    const problems = validateEnvironmentSpec({
      name: 'Bad Name',
      tags: 'shell',
      requiredTools: ['bash'],
      difficulties: [0, 6],
      testFraction: 1,
    });
    expect(problems.join('\n')).toMatch(/"name" must be a snake_case string/);
    expect(problems.join('\n')).toMatch(/"description" is missing/);
    expect(problems.join('\n')).toMatch(/"tags" must be an array/);
    expect(problems.join('\n')).toMatch(/unknown tools "bash"; known tools: js, calc, sh, git/);
    expect(problems.join('\n')).toMatch(/"difficulties" must be a non-empty array of levels from 1 to 5/);
    expect(problems.join('\n')).toMatch(
      /"testFraction" must be a number above 0 and at most 0.8, leaving room for validation and train/,
    );
    expect(problems.join('\n')).toMatch(/"sample" is missing/);
    expect(problems.join('\n')).toMatch(/"evaluate" is missing/);
    expect(validateEnvironmentSpec(capsSpec)).toEqual([]);
    expect(validateEnvironmentSpec(null)).toHaveLength(1);
    expect(() => registerEnvironment({ ...capsSpec, evaluate: undefined } as unknown as EnvironmentSpec)).toThrow(
      EnvironmentSpecError,
    );
    expect(() => registerEnvironment({ ...capsSpec, evaluate: undefined } as unknown as EnvironmentSpec)).toThrow(
      /Environment "caps_count" is invalid:\n {2}- "evaluate" is missing/,
    );
  });
});

describe('defineEnvironment', () => {
  it('rejects an out-of-range score instead of passing it on', async () => {
    const env = defineEnvironment({ ...capsSpec, evaluate: () => 2 });
    const task = env.generate(0, 1, 'train');
    const t = await runEpisode({ policy: new ScriptedPolicy({ turns: ['1'] }), env, task, seed: 0 });
    await expect(env.evaluate(task, t)).rejects.toThrow(/returned 2; it must return a number in \[0, 1\] or null/);
  });

  it('passes null through: "cannot decide" is not a 0', async () => {
    const env = defineEnvironment({ ...capsSpec, evaluate: () => null });
    const task = env.generate(0, 1, 'train');
    expect((await expertTrajectory(env, task)).judge_score).toBeNull();
  });

  it('explains when a level has too few items for a split', () => {
    const tiny = defineEnvironment({ ...capsSpec, sample: () => ({ prompt: 'same', data: {}, key: 'only-item' }) });
    const other = tiny.splitOf('only-item') === 'train' ? 'test' : 'train';
    expect(() => tiny.generate(0, 1, other)).toThrow(/item space is too small/);
  });
});
