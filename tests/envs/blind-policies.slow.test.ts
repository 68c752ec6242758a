/**
 * No environment pays for ignoring the task: every task-blind policy (src/rollout/blind-policies.ts)
 * runs on the distinct held-out items of every environment and level (200, 120 for git_repo, whose
 * items each build a repository), and its success must stay within the environment's declared luck
 * (`chance`, at most 10%): the test fails when the low end of the policy's Wilson 95% interval is above
 * it, or its rate is above 10%. Minutes of episodes on a 2-core machine: `npm run test:slow`.
 * blind-policies.test.ts checks that the family finds the shortcuts it is meant to.
 */
import { describe, expect, it } from 'vitest';
import { listEnvironments } from '../../src/envs/registry.ts';
import { evaluateBlindPolicies } from '../../src/rollout/blind-policies.ts';
import { wilsonInterval } from '../../src/rollout/success-interval.ts';

const ITEMS: Record<string, number> = { git_repo: 120 };
const cases = listEnvironments().flatMap((env) => env.difficulties.map((level) => [env.name, level] as const));

describe.each(cases)('%s level %i', (name, level) => {
  const env = listEnvironments().find((e) => e.name === name)!;
  const items = ITEMS[name] ?? 200;

  it(`no task-blind policy beats the chance rate on ${items} distinct test items`, async () => {
    const chance = env.chance(level);
    expect(chance).toBeLessThanOrEqual(0.1);
    const results = await evaluateBlindPolicies(env, level, { items, seed: 11 });
    expect(results.length).toBeGreaterThan(40);
    const over = results.filter((r) => wilsonInterval(Math.round(r.success * r.n), r.n)[0] > chance || r.success > 0.1);
    expect(
      over.map((r) => `${r.policy}: ${(100 * r.success).toFixed(1)}% (chance ${(100 * chance).toFixed(1)}%)`),
    ).toEqual([]);
  });
});
