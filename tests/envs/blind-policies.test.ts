/**
 * The task-blind policy family (src/rollout/blind-policies.ts) finds the shortcuts a reviewer found: on
 * small environments built the way countdown level 1 and git_repo level 1 once were, the reviewer's
 * shortcuts ("larger − smaller" through calc, 83–89%; `git log -1` then its last line, 60%) must be found,
 * so dropping a recipe that catches them fails here. blind-policies.slow.test.ts (`npm run test:slow`)
 * runs the family on every environment and level.
 */
import { describe, expect, it } from 'vitest';
import { finalAnswer } from '../../src/envs/answer.ts';
import { defineEnvironment } from '../../src/envs/define.ts';
import { equalsInteger, evaluateExact } from '../../src/envs/expr.ts';
import { toolDidTheWork } from '../../src/envs/evidence.ts';
import { scoreQuestion } from '../../src/envs/state-check.ts';
import { bestBlindByKind, bestBlindSuccess, evaluateBlindPolicies } from '../../src/rollout/blind-policies.ts';

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
        return {
          prompt: `Make ${b - a} from ${a}, ${b} using + - * /. Answer with the expression.`,
          data: { a, b, target: b - a },
        };
      },
      evaluate: (task, trajectory) => {
        const { a, b, target } = task.data as { a: number; b: number; target: number };
        const solves = (e: string) => {
          try {
            const parsed = evaluateExact(e);
            return (
              [...parsed.numbers].sort((x, y) => x - y).join() === [a, b].join() && equalsInteger(parsed.value, target)
            );
          } catch {
            return false;
          }
        };
        const worked = toolDidTheWork(trajectory, {
          tools: ['calc'],
          mentions: solves,
          result: (v) => v.trim() === String(target),
        });
        return worked && solves(finalAnswer(trajectory)) ? 1 : 0;
      },
    });
    const best = await bestBlindSuccess(env, 1, { items: 40, seed: 11 });
    expect(best.success).toBe(1);
    expect(best.policy).toMatch(/larger − smaller.*by calc/);
    // The formula reads the question's numbers: part-blind. A recipe that reads nothing of it does not get there.
    expect(best.kind).toBe('part-blind');
    const byKind = await bestBlindByKind(env, 1, { items: 40, seed: 11 });
    expect(byKind.part?.success).toBe(1);
    expect(byKind.task.kind).toBe('task-blind');
    expect(byKind.task.success).toBeLessThan(0.2);
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
      toolbox: (task) => ({
        files: { 'a.txt': 'x\n' },
        gitRepo: true,
        calls: [
          { tool: 'sh', args: { command: 'echo y >> a.txt' } },
          { tool: 'git', args: { command: 'add a.txt' } },
          { tool: 'git', args: { command: `commit -m "${String(task.data.message)}"` } },
        ],
      }),
      evaluate: (task, trajectory) =>
        scoreQuestion(trajectory, { type: 'text', value: String(task.data.message) }, ['sh', 'git']),
    });
    const results = await evaluateBlindPolicies(env, 1, { items: 20, seed: 11 });
    const hit = results.filter((r) => r.success === 1).map((r) => r.policy);
    expect(hit).toContain('git `log -1`, then echo its last line');
    expect(hit).toContain('sh `git log -1`, then echo its last line');
  });
});
