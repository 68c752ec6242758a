/**
 * The check before training, attacked: environments that pay for nothing, declare impossible luck, or
 * make the audit run for ever one bounded call at a time. Each must end with a named problem or a
 * named timeout (a small budget is passed in, so each test is quick), never "ready to train on".
 */
import { afterAll, describe, expect, it } from 'vitest';
import { CheckTimeoutError } from '../../src/envs/check-budget.ts';
import { defineEnvironment } from '../../src/envs/define.ts';
import { loadEnvironmentModule, type ModuleEnvironment } from '../../src/envs/module-env.ts';
import { taskFileSpec } from '../../src/envs/task-file/index.ts';
import { auditEnvironment, formatAudit } from '../../src/rollout/env-audit.ts';

const opened: ModuleEnvironment[] = [];
afterAll(() => opened.forEach((m) => m.close()));

/** A module with these members added to a plain one-level environment whose tasks are numbers to repeat. */
function moduleWith(members: string, name = 'attack'): string {
  return `export default {
  name: '${name}', description: 'repeat a number', tags: ['t'], levels: [1],
  sample(rng) { const n = rng.int(1, 100000); return { prompt: 'Say ' + n + '.', data: { n }, key: String(n) }; },
  evaluate(task, t) { return String(t.final_response).trim() === String(task.data.n) ? 1 : 0; },
  ${members}
};`;
}

async function load(source: string, timeoutMs = 2000) {
  const m = await loadEnvironmentModule(source, { timeoutMs });
  opened.push(m);
  return m.env;
}

describe('an environment that pays for nothing', () => {
  for (const [what, chance, declared] of [
    [
      'declares a luck of 1',
      'chance() { return 1; }',
      /chance\(1\) returned 1; it must return a number from 0 to 0\.1/,
    ],
    [
      "declares a luck of 'lots'",
      "chance() { return 'lots'; }",
      /chance\(1\) returned "lots"; it must return a number from 0 to 0\.1/,
    ],
    ['declares no luck', '', null],
  ] as const) {
    it(`${what}: the audit fails it, naming the shortcut`, async () => {
      const env = await load(moduleWith(`${chance}${chance ? ',' : ''} evaluate() { return 1; },`, 'pays_all'));
      const audit = await auditEnvironment(env, { items: 6 });
      expect(audit.problems).toContainEqual(
        expect.stringMatching(
          /^level 1: .* scores 6\/6 = 100% \[61, 100\] without reading the task: this environment pays for ignoring it/,
        ),
      );
      if (declared) expect(audit.problems).toContainEqual(expect.stringMatching(declared));
      expect(formatAudit(audit).at(-1)).toMatch(
        /^(1 problem: fix it|\d+ problems: fix them) before training on pays_all\.$/,
      );
    }, 60_000);
  }

  it('a declared luck is checked where it is read, not coerced', async () => {
    const env = await load(moduleWith("chance(level) { return level === 1 ? '0.05' : 0; }", 'text_luck'));
    expect(() => env.chance(1)).toThrow(/chance\(1\) returned "0\.05"; it must return a number from 0 to 0\.1/);
    const measured = defineEnvironment(
      taskFileSpec('yes_no', [
        { prompt: 'a?', answer: 'yes' },
        { prompt: 'b?', answer: 'yes' },
        { prompt: 'c?', answer: 'no' },
      ]),
    );
    expect(measured.chance(1)).toBeCloseTo(2 / 3); // a task file's luck is measured from its rows, and may be higher
  });

  it('an evaluate that never decides (null every time) is a problem, not a pass', async () => {
    const env = await load(
      moduleWith('expert(task) { return [String(task.data.n)]; }, evaluate() { return null; }', 'never_scores'),
    );
    const audit = await auditEnvironment(env, { items: 4 });
    expect(audit.problems).toContainEqual(
      expect.stringMatching(/^level 1: evaluate gave no score on any of the \d+ episodes it judged/),
    );
  }, 60_000);
});

/** The audit's end under a small budget: the CheckTimeoutError it throws, with the step it names. */
async function timedOut(work: Promise<unknown>): Promise<CheckTimeoutError> {
  const error = await work.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CheckTimeoutError);
  return error as CheckTimeoutError;
}

describe('an audit has one overall budget', () => {
  it('a tool that loops (each call stopped at its deadline) ends the audit at its budget, naming the step', async () => {
    const env = await load(
      moduleWith(`
      tools: { spin: { description: 'spins', parameters: {}, run() { for (;;) {} } } },
      expert(task) { return [{ tool: 'spin', args: {} }, String(task.data.n)]; },`),
      400,
    );
    const lines: string[] = [];
    const error = await timedOut(
      auditEnvironment(env, { items: 16, budgetMs: 3000, onProgress: (line) => lines.push(line) }),
    );
    expect(error.message).toMatch(/^the check ran out of its 3 s budget during "level 1: the expert on 8 tasks"/);
    // The steps were reported as they started, the one that ran out last.
    expect(lines).toEqual(['sampling 5 tasks…', '5 tasks sampled', 'level 1: the expert on 8 tasks…']);
  }, 60_000);

  it('a tool that throws an object whose message getter loops ends at the budget', async () => {
    const env = await load(
      moduleWith(`
      tools: { boom: { description: 'throws', parameters: {}, run() { throw { get message() { for (;;) {} } }; } } },
      expert(task) { return [{ tool: 'boom', args: {} }, String(task.data.n)]; },`),
      400,
    );
    await timedOut(auditEnvironment(env, { items: 16, budgetMs: 1500 }));
  }, 60_000);

  it('a sample that takes most of its deadline every time ends at the budget', async () => {
    const env = await load(
      moduleWith(`
      sample(rng) { const end = Date.now() + 100; while (Date.now() < end); const n = rng.int(1, 100000); return { prompt: 'Say ' + n + '.', data: { n }, key: String(n) }; },`),
      2000,
    );
    const error = await timedOut(auditEnvironment(env, { items: 16, budgetMs: 500 }));
    expect(error.step).toMatch(/^(sampling 5 tasks|level 1: the task-blind policies on 16 items)$/);
  }, 60_000);

  it('a module of 10,000 tools is refused when it loads, by name', async () => {
    const tools = Array.from(
      { length: 10_000 },
      (_, i) => `t${i}: { description: 'd', parameters: {}, run() { return ''; } }`,
    ).join(',\n');
    await expect(loadEnvironmentModule(moduleWith(`tools: { ${tools} },`))).rejects.toThrow(
      /"tools" has 10000 tools, above the 32 a module may have/,
    );
    const wordy = `tools: { t: { description: '${'x'.repeat(20_000)}', parameters: {}, run() { return ''; } } },`;
    await expect(loadEnvironmentModule(moduleWith(wordy))).rejects.toThrow(
      /characters of JSON, above the 16000 the prompt's tool list may take/,
    );
  }, 60_000);

  it('a 900,000-character prompt is refused by name at the first task', async () => {
    const env = await load(
      moduleWith(
        `sample(rng) { const n = rng.int(1, 9); return { prompt: 'Say ' + n + '. ' + 'x'.repeat(900000), data: { n }, key: String(n) }; },`,
      ),
    );
    await expect(auditEnvironment(env, { items: 4, budgetMs: 5000 })).rejects.toThrow(
      /sample gave a prompt of 900\d{3} characters, above the 32000 a task's prompt may have/,
    );
  }, 60_000);

  // Task-file verifiers that are bounded per call (their timeout_ms) but cost the audit without end; each
  // scores the row's own answer, so the file passes its trial and only the budget can stop it.
  const slowOnWrongAnswers: Record<string, string> = {
    loops: 'for (;;) {}',
    allocates: 'const a = []; for (;;) a.push(new Array(100000).fill(1));',
    'backtracks in a regex': "/^(a+)+$/.test('a'.repeat(40) + 'b');",
  };
  for (const [what, body] of Object.entries(slowOnWrongAnswers)) {
    it(`a js verifier that ${what} on wrong answers ends the audit at its budget`, async () => {
      const source = `(answer, row) => { if (answer.trim() === String(row.answer)) return 1; ${body} return 0; }`;
      const rows = Array.from({ length: 40 }, (_, i) => ({ prompt: `What is ${i} + ${i}?`, answer: String(2 * i) }));
      const spec = taskFileSpec('slow_verifier', rows, { verifier: { type: 'js', source, timeout_ms: 100 } });
      expect(await spec.tryVerifiers()).toEqual([]);
      await timedOut(auditEnvironment(defineEnvironment(spec), { items: 16, budgetMs: 800 }));
    }, 60_000);
  }
});
