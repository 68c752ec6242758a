/**
 * No environment pays for ignoring the task: every task-blind policy (src/rollout/blind-policies.ts)
 * runs on the distinct held-out items of every environment and level (200, 120 for git_repo, whose
 * items each build a repository), and its success must stay within the environment's declared luck
 * (`chance`, at most 10%): the test fails when the low end of the policy's Wilson 95% interval is above
 * it, or its rate is above 10%.
 *
 * The family itself is checked too: on small environments built the way countdown level 1 and git_repo
 * level 1 once were, the reviewer's shortcuts ("larger − smaller" through calc, 83–89%; `git log -1`
 * then its last line, 60%) must be found, so dropping a recipe that catches them fails here.
 */
import { describe, expect, it } from 'vitest';
import { finalAnswer } from '../../src/envs/answer.ts';
import { defineEnvironment } from '../../src/envs/define.ts';
import { equalsInteger, evaluateExact } from '../../src/envs/expr.ts';
import { toolDidTheWork } from '../../src/envs/evidence.ts';
import { listEnvironments } from '../../src/envs/registry.ts';
import { scoreQuestion } from '../../src/envs/state-check.ts';
import { bestBlindSuccess, evaluateBlindPolicies } from '../../src/rollout/blind-policies.ts';
import { wilsonInterval } from '../../src/rollout/success-interval.ts';

const ITEMS: Record<string, number> = { git_repo: 120 };
const cases = listEnvironments().flatMap((env) => env.difficulties.map((level) => [env.name, level] as const));

describe.each(cases)('%s level %i', (name, level) => {
  const env = listEnvironments().find((e) => e.name === name)!;
  const items = ITEMS[name] ?? 200;

  it(`no task-blind policy beats the chance rate on ${items} distinct test items`, { timeout: 300_000 }, async () => {
    const chance = env.chance(level);
    expect(chance).toBeLessThanOrEqual(0.1);
    const results = await evaluateBlindPolicies(env, level, { items, seed: 11 });
    expect(results.length).toBeGreaterThan(40);
    const over = results.filter((r) => wilsonInterval(Math.round(r.success * r.n), r.n)[0] > chance || r.success > 0.1);
    expect(over.map((r) => `${r.policy}: ${(100 * r.success).toFixed(1)}% (chance ${(100 * chance).toFixed(1)}%)`)).toEqual([]);
  });
});

describe('the blind family finds the shortcuts a reviewer found', () => {
  it('"larger − smaller" through calc on a two-number countdown', async () => {
    // Countdown level 1 as it was: two numbers, and a target that is their difference.
    const env = defineEnvironment({
      name: 'two_number_countdown',
      description: 'Reach a target from two numbers.',
      tags: ['test'],
      requiredTools: ['calc'],
      difficulties: [1],
      sample: (rng) => {
        const [a, b] = [rng.int(1, 10), rng.int(11, 40)];
        return { prompt: `Make ${b - a} from ${a}, ${b} using + - * /. Answer with the expression.`, data: { a, b, target: b - a } };
      },
      evaluate: (task, trajectory) => {
        const { a, b, target } = task.data as { a: number; b: number; target: number };
        const solves = (e: string) => {
          try {
            const parsed = evaluateExact(e);
            return [...parsed.numbers].sort((x, y) => x - y).join() === [a, b].join() && equalsInteger(parsed.value, target);
          } catch {
            return false;
          }
        };
        const worked = toolDidTheWork(trajectory, { tools: ['calc'], mentions: solves, result: (v) => v.trim() === String(target) });
        return worked && solves(finalAnswer(trajectory)) ? 1 : 0;
      },
    });
    const best = await bestBlindSuccess(env, 1, { items: 40, seed: 11 });
    expect(best.success).toBe(1);
    expect(best.policy).toMatch(/larger − smaller.*by calc/);
  });

  it('`git log -1`, then its last line, on "what is the message of the last commit?"', async () => {
    // git_repo level 1 as it was: the answer is the newest commit's message.
    const messages = ['fix parser', 'add readme', 'update docs', 'remove cache', 'speed up loader'];
    const env = defineEnvironment({
      name: 'last_message_only',
      description: 'Name the last commit message.',
      tags: ['test'],
      requiredTools: ['sh', 'git'],
      difficulties: [1],
      sample: (rng) => {
        const message = rng.pick(messages);
        return { prompt: 'What is the message of the last commit?', data: { message }, key: message };
      },
      toolbox: (task) => ({ files: { 'a.txt': 'x\n' }, gitRepo: true, calls: [{ tool: 'sh', args: { command: 'echo y >> a.txt' } }, { tool: 'git', args: { command: 'add a.txt' } }, { tool: 'git', args: { command: `commit -m "${String(task.data.message)}"` } }] }),
      evaluate: (task, trajectory) => scoreQuestion(trajectory, { type: 'text', value: String(task.data.message) }, ['sh', 'git']),
    });
    const results = await evaluateBlindPolicies(env, 1, { items: 20, seed: 11 });
    const hit = results.filter((r) => r.success === 1).map((r) => r.policy);
    expect(hit).toContain('git `log -1`, then echo its last line');
    expect(hit).toContain('sh `git log -1`, then echo its last line');
  });
});
