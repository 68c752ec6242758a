import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { loadEnvironmentModule, EnvironmentModuleError, type ModuleEnvironment } from '../../src/envs/module-env.ts';
import { expertTrajectory } from '../../src/rollout/expert.ts';

const TREASURE = readFileSync(new URL('../../examples/envs/treasure-hunt.js', import.meta.url), 'utf8');
const opened: ModuleEnvironment[] = [];
async function load(source: string) {
  const m = await loadEnvironmentModule(source);
  opened.push(m);
  return m.env;
}
afterAll(() => opened.forEach((m) => m.close()));

describe('environment modules', () => {
  it('loads the example: fields, own tools and deterministic tasks', async () => {
    const env = await load(TREASURE);
    expect(env.name).toBe('treasure_hunt');
    expect(env.difficulties).toEqual([1, 2, 3, 4]);
    expect(env.ownTools.map((t) => t.name)).toEqual(['read_note', 'unlock']);
    expect(env.ownTools[0].parameters.required).toEqual(['id']);
    const a = env.generate(7, 3, 'train');
    expect(env.generate(7, 3, 'train')).toEqual(a);
    expect((a.data.chain as string[]).length).toBe(3);
    expect(env.generate(8, 3, 'train').prompt).not.toBe(a.prompt);
  });

  it('lists its own tools with their descriptions, since no model knows them by name', async () => {
    const env = await load(TREASURE);
    expect(env.systemStyle).toBe('described');
    const t = await expertTrajectory(env, env.generate(7, 1, 'test'));
    for (const tool of env.ownTools) expect(t.messages[0].content).toContain(`${tool.name}(`);
    expect(t.messages[0].content).toContain(env.ownTools[0].description!.trim());
  });

  it('the expert solves every level through the real tools; answering without them fails', async () => {
    const env = await load(TREASURE);
    for (const level of env.difficulties) {
      const task = env.generate(level, level, 'test');
      const t = await expertTrajectory(env, task);
      expect(t.steps.map((s) => s.tool_call?.error)).toEqual(Array(level + 1).fill(null));
      expect(t.steps.at(-1)?.observation).toContain(String(task.data.prize));
      expect(await env.evaluate(task, t)).toBe(1);
      const guessed = { ...t, steps: [], final_response: String(task.data.prize) };
      expect(await env.evaluate(task, guessed)).toBe(0);
    }
  });

  it('keeps tool state within an episode, not across episodes', async () => {
    const env = await load(TREASURE);
    const task = env.generate(3, 1, 'train');
    const first = await env.openTools!(task, { timeoutMs: 1000 });
    for (let i = 2; i >= 0; i--)
      expect((await first.call('unlock', { code: 'x' })).error).toBe(`wrong code; ${i} tries left`);
    expect((await first.call('unlock', { code: task.data.code })).error).toBe('the box is locked for good');
    first.dispose();
    const second = await env.openTools!(task, { timeoutMs: 1000 });
    expect((await second.call('unlock', { code: task.data.code })).result).toContain(String(task.data.prize));
    expect((await second.call('read_note', {})).error).toMatch(/missing argument "id"/);
    expect((await second.call('read_note', { id: 'nzzz' })).error).toMatch(/no note "nzzz"; note ids look like n/);
    second.dispose();
  });

  it('names every problem of a module, with the line', async () => {
    const syntax = await loadEnvironmentModule('export default {\n  name: "x",,\n}').catch((e) => e);
    expect(syntax).toBeInstanceOf(EnvironmentModuleError);
    expect(syntax.line).toBe(2);
    const missing = await loadEnvironmentModule('export default { name: "Bad Name", tags: "x" }').catch((e) => e);
    expect(missing.problems.join('\n')).toMatch(
      /"name" must be a snake_case[\s\S]*"description" is missing[\s\S]*"tags"[\s\S]*"sample" is missing[\s\S]*"evaluate" is missing/,
    );
    const shadow = await loadEnvironmentModule(
      'export default { tools: { sh: { description: "d", run() {} } } }',
    ).catch((e) => e);
    expect(shadow.message).toMatch(/would hide the sandbox's own sh tool/);
  });

  it('stops a sample that loops within its deadline and reports a throw at its line', async () => {
    const base = (body: string) =>
      `export default {\n name: "loop_env", description: "d", tags: [],\n sample(rng, level) {\n ${body}\n },\n evaluate() { return 0; } }`;
    const looping = await loadEnvironmentModule(base('for (;;) {}'), { timeoutMs: 100 });
    opened.push(looping);
    expect(() => looping.env.generate(1, 1, 'train')).toThrow(/sample: timeout after 100 ms/);
    const throwing = await loadEnvironmentModule(base('throw new Error("no items at level " + level);'));
    opened.push(throwing);
    expect(() => throwing.env.generate(1, 2, 'train')).toThrow(/no items at level 2 \(env\.js:4\)/);
    // One built-in past the deadline (QuickJS cannot interrupt it): a timeout when it ends, not a task.
    const longBuiltin = await loadEnvironmentModule(
      base('return { prompt: String(7n ** 250000n).slice(0, 9), data: {} };'),
      { timeoutMs: 50 },
    );
    opened.push(longBuiltin);
    expect(() => longBuiltin.env.generate(1, 1, 'train')).toThrow(/sample: timeout after 50 ms/);
    const hungry = await loadEnvironmentModule(base('const a = []; for (;;) a.push("x".repeat(1000));'), {
      memoryBytes: 4 << 20,
      timeoutMs: 5000,
    });
    opened.push(hungry);
    expect(() => hungry.env.generate(1, 1, 'train')).toThrow(/out of memory/);
  });
});

describe('auditing a user environment', () => {
  it('passes the example and names the shortcut of one that pays for a constant answer', async () => {
    const { auditEnvironment, formatAudit } = await import('../../src/rollout/env-audit.ts');
    const env = await load(TREASURE);
    const audit = await auditEnvironment(env, { items: 6, levels: [1, 2] });
    expect(audit.samples).toHaveLength(5);
    expect(audit.levels.map((l) => l.expert?.successes)).toEqual([6, 6]);
    expect(audit.problems).toEqual([]);
    const lenient = TREASURE.replace(
      'if (state.opened && named) return 1;',
      'if (answer.trim() === "1" || (state.opened && named)) return 1;',
    ).replace("name: 'treasure_hunt'", "name: 'lenient_hunt'");
    const bad = await auditEnvironment(await load(lenient), { items: 6, levels: [1] });
    expect(bad.problems.join('\n')).toMatch(
      /level 1: always "1" scores 6\/6 = 100% \[61, 100\] without reading the task: this environment pays for ignoring it/,
    );
    expect(formatAudit(bad).at(-1)).toMatch(/^1 problem: fix it before/);
  });
});

describe("the README's module", () => {
  it('loads, and its expert opens the vault through its own tools', async () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const source = /```js\n(\/\/ vault\.js[\s\S]*?)```/.exec(readme)![1];
    const env = await load(source);
    const task = env.generate(1, 1, 'test');
    const t = await expertTrajectory(env, task);
    expect(t.steps.map((s) => s.tool_call?.error)).toEqual([null, null]);
    expect(t.success).toBe(true);
  });
});
