/**
 * Held-out evaluation runs on distinct items: no item (item_key) twice, seeds drawn in a fixed order,
 * and a level with fewer distinct items than asked is evaluated on those it has, says so in the result
 * (`distinct < asked`) and in the table ("(only N distinct)"), with the interval on the distinct count.
 */
import { describe, expect, it } from 'vitest';
import { finalAnswer } from '../../src/envs/answer.ts';
import { defineEnvironment } from '../../src/envs/define.ts';
import type { EnvironmentSpec } from '../../src/envs/types.ts';
import { distinctNote, evaluatePolicy, evaluationTasks, formatEvalTable } from '../../src/rollout/evaluate.ts';
import { ScriptedPolicy } from '../../src/rollout/scripted-policy.ts';
import { wilsonInterval } from '../../src/rollout/success-interval.ts';

/** "What is n?" for n drawn from `space` values: success is answering n. */
function echoEnv(space: number): EnvironmentSpec {
  return {
    name: `echo_${space}`,
    description: 'Say the number in the question.',
    tags: ['test'],
    requiredTools: [],
    difficulties: [1],
    sample: (rng) => {
      const n = rng.int(1, space);
      return { prompt: `What is ${n}?`, data: { n }, key: String(n) };
    },
    evaluate: (task, trajectory) => (finalAnswer(trajectory) === String(task.data.n) ? 1 : 0),
  };
}

/** Answers the question's number on odd numbers, 0 on even ones. */
const halfRight = new ScriptedPolicy({
  turns: (context) => {
    const n = Number(/\d+/.exec(context.messages.find((m) => m.role === 'user')!.content)![0]);
    return n % 2 === 1 ? String(n) : '0';
  },
});

describe('evaluatePolicy', () => {
  it('evaluates distinct items, drawn in a fixed order', async () => {
    const env = defineEnvironment(echoEnv(100_000));
    const prompts: string[] = [];
    const [r] = await evaluatePolicy(halfRight, [env], {
      items: 40,
      seed: 3,
      onEpisode: (t) => prompts.push(t.task_description),
    });
    expect(r.n).toBe(40);
    expect(r.distinct).toBe(40);
    expect(r.asked).toBe(40);
    expect(new Set(prompts).size).toBe(40);
    expect(distinctNote(r)).toBe('');
    expect(formatEvalTable([r])).not.toContain('distinct');
    const again = evaluationTasks(env, 1, { items: 40, seed: 3 });
    expect(again.map((t) => t.prompt)).toEqual(prompts);
    expect(new Set(again.map((t) => t.data.item_key)).size).toBe(40);
  });

  it('says when a level has fewer distinct items than asked, and counts each once', async () => {
    const env = defineEnvironment(echoEnv(30));
    // The test split of 30 numbers: the items an evaluation can ever see.
    const testItems = Array.from({ length: 30 }, (_, i) => String(i + 1)).filter((k) => env.splitOf(k) === 'test');
    expect(testItems.length).toBeGreaterThan(1);
    expect(testItems.length).toBeLessThan(20);

    const prompts: string[] = [];
    const [r] = await evaluatePolicy(halfRight, [env], {
      items: 100,
      seed: 5,
      onEpisode: (t) => prompts.push(t.task_description),
    });
    expect(r.asked).toBe(100);
    expect(r.distinct).toBe(testItems.length);
    expect(r.n).toBe(testItems.length);
    expect(prompts.sort()).toEqual(testItems.map((k) => `What is ${k}?`).sort());
    const odd = testItems.filter((k) => Number(k) % 2 === 1).length;
    expect(r.success).toBeCloseTo(odd / testItems.length);

    expect(distinctNote(r)).toBe(`only ${testItems.length} distinct`);
    const table = formatEvalTable([r]);
    // The count and its interval are those of the distinct items, not of the 100 asked.
    const [lo, hi] = wilsonInterval(odd, testItems.length);
    const pct = (x: number) => Math.round(100 * x);
    expect(table).toContain(
      `${odd}/${testItems.length} = ${pct(odd / testItems.length)}% [${pct(lo)}, ${pct(hi)}] (only ${testItems.length} distinct)`,
    );
  });

  it('fails loudly when the split has no item at all', async () => {
    const env = defineEnvironment({ ...echoEnv(1), name: 'echo_one', testFraction: 0.7 });
    const split = env.splitOf('1') === 'test' ? 'train' : 'test';
    await expect(evaluatePolicy(halfRight, [env], { items: 5, seed: 1, split })).rejects.toThrow(
      /item space is too small/,
    );
  });
});
