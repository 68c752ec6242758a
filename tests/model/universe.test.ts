/**
 * The base model's procedural tool universe (scripts/base-model/universe): every family's expert solves
 * every level through the real agent loop, worlds differ in their tools' surface, the held-out
 * families and task template never reach the build, and no task-blind policy scores on a world.
 */
import { describe, expect, it } from 'vitest';
import { createRng } from '../../src/rng.ts';
import { ByteTokenizer } from '../../src/tokenizer/byte-tokenizer.ts';
import { expertTrajectory } from '../../src/rollout/expert.ts';
import { evaluateBlindPolicies } from '../../src/rollout/blind-policies.ts';
import { BUILD_FAMILIES, HELD_OUT_FAMILIES, worlds } from '../../scripts/base-model/universe/index.ts';
import { copyDrill } from '../../scripts/base-model/universe/copy-drill.ts';
import { WORDS } from '../../scripts/base-model/universe/surface.ts';

const tokenizer = new ByteTokenizer();
const ALL = [...BUILD_FAMILIES, ...HELD_OUT_FAMILIES];

describe.each(ALL.map((f) => [f.name, f] as const))('the %s family', (_name, family) => {
  it('its expert succeeds at every level, with the build and the held-out wording', async () => {
    for (const templates of ['build', 'held_out'] as const) {
      for (const env of worlds(family, 2, 'evaluate', templates)) {
        for (const level of family.levels) {
          for (const split of ['train', 'test'] as const) {
            const t = await expertTrajectory(env, env.generate(level * 7, level, split), { tokenizer });
            expect({ env: env.name, level, success: t.success }).toEqual({ env: env.name, level, success: true });
          }
        }
      }
    }
  });

  it('an answer without the calls that show it scores 0', async () => {
    const env = worlds(family, 1, 'evaluate')[0];
    const task = env.generate(3, family.levels.at(-1)!, 'test');
    const answer = (task.data as { answer: string }).answer;
    const t = await expertTrajectory(env, task, { tokenizer, turns: () => [answer] });
    expect(t.success).toBe(false);
  });

  it('no task-blind policy scores on its worlds', { timeout: 120_000 }, async () => {
    const env = worlds(family, 1, 'evaluate')[0];
    for (const level of family.levels) {
      const results = await evaluateBlindPolicies(env, level, { items: 40, seed: 5 });
      expect(results.filter((r) => r.success > 0).map((r) => `${r.policy} L${level}: ${r.success}`)).toEqual([]);
    }
  });
});

describe('the universe', () => {
  it('draws worlds whose tool names and descriptions differ', () => {
    for (const family of ALL) {
      const surfaces = worlds(family, 12, 'build').map((env) =>
        env.ownTools.map((t) => `${t.name}: ${t.description}`).join(' | '),
      );
      expect(new Set(surfaces).size, family.name).toBeGreaterThan(6);
    }
  });

  it('draws prefixes the base cannot have memorised in build worlds, and only word prefixes in held-out ones', () => {
    const prefixesOf = (families: typeof BUILD_FAMILIES) =>
      families.flatMap((f) => worlds(f, 12, 'build').flatMap((env) => env.ownTools.map((t) => t.name.split('_')[0])));
    const known = new Set([...WORDS.prefixes, 'tool', 'fn', 'op', 'api', 'cmd']);
    const plainWords = (name: string) => /^[a-z]+$/.test(name);
    const unknownBuild = prefixesOf(BUILD_FAMILIES).filter((p) => !known.has(p) && plainWords(p));
    expect(unknownBuild.length).toBeGreaterThan(10);
    // The held-out worlds keep the surfaces earlier builds were measured on (this world's names, as drawn then).
    const inventory = HELD_OUT_FAMILIES.find((f) => f.name === 'inventory')!;
    const world = worlds(inventory, 20, 'evaluate').find((env) => env.name === 'u_inventory_2317')!;
    expect(world.ownTools.map((t) => t.name)).toEqual(['sigma_count', 'sigma_receive', 'sigma_ship']);
  });

  it('keeps the held-out families out of the build', () => {
    const build = new Set(BUILD_FAMILIES.map((f) => f.name));
    expect(HELD_OUT_FAMILIES.filter((f) => build.has(f.name))).toEqual([]);
  });

  it('words the same task differently with the held-out template', () => {
    for (const family of BUILD_FAMILIES) {
      const surface = family.surface(createRng(1));
      for (const level of family.levels) {
        for (let i = 0; i < 20; i++) {
          const built = family.sample(surface, createRng(i), level, 'build');
          const held = family.sample(surface, createRng(i), level, 'held_out');
          expect(held.answer).toBe(built.answer); // the same task …
          expect(held.prompt, `${family.name} L${level}`).not.toBe(built.prompt); // … in words the build never uses
        }
      }
    }
  });
});

describe('the copy drill', () => {
  it('scores the exact list repeated, and nothing short of it', async () => {
    for (const level of copyDrill.difficulties) {
      const task = copyDrill.generate(level * 5, level, 'train');
      const answer = (task.data as { answer: string }).answer;
      expect(answer.split(', ').length).toBeGreaterThanOrEqual(2 * level);
      expect((await expertTrajectory(copyDrill, task, { tokenizer })).success).toBe(true);
      const dropped = answer.split(', ').slice(1).join(', ');
      expect((await expertTrajectory(copyDrill, task, { tokenizer, turns: () => [dropped] })).success).toBe(false);
    }
  });

  it('no task-blind policy scores on it', { timeout: 120_000 }, async () => {
    const results = await evaluateBlindPolicies(copyDrill, 1, { items: 20, seed: 3 });
    expect(results.every((r) => r.success === 0)).toBe(true);
  });
});
