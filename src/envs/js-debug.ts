/**
 * js_debug: fix a buggy JavaScript function. The prompt states what
 * the function should do and shows the buggy code; the answer is the fixed function (a fenced block or
 * bare code). Hidden tests run in the QuickJS sandbox on the answer and on the reference fix, and the
 * score is the share of tests whose results match: a partial fix scores between 0 and 1. Success also
 * needs a successful js call that ran the function (the fix was tried); without one the share is halved.
 * When the sandbox cannot run the reference, the environment cannot decide and returns null.
 */
import type { Task, Trajectory } from '../contracts.ts';
import { runJsIsolated } from '../sandbox/index.ts';
import { extractCode, finalAnswer } from './answer.ts';
import { callSource, successfulCalls } from './evidence.ts';
import { JS_BUGS, JS_DEBUG_PROMPT, type BugTemplate } from './data/js-bugs.ts';
import { answerTurn, callTurn } from './expert-text.ts';
import type { EnvironmentSpec, TaskItem } from './types.ts';

/** Deadline for running all hidden tests of one answer. */
const TEST_TIMEOUT_MS = 1000;

function fill(text: string, fn: string, k: number | null): string {
  return text.replaceAll('{fn}', fn).replaceAll('{k}', String(k ?? ''));
}

/** Guest code: the candidate, then every hidden test in its own try, results as a JSON array of strings. */
function testHarness(code: string, fn: string, tests: unknown[][]): string {
  return `${code}
;(() => {
  const out = [];
  for (const args of ${JSON.stringify(tests)}) {
    try {
      const v = ${fn}(...args);
      out.push(v === undefined ? 'undefined' : JSON.stringify(v));
    } catch (e) {
      out.push('throws');
    }
  }
  return JSON.stringify(out);
})()`;
}

/** Test results of some code, or null when it did not run to completion. */
async function runTests(code: string, fn: string, tests: unknown[][]): Promise<string[] | null> {
  const r = await runJsIsolated(testHarness(code, fn, tests), { timeoutMs: TEST_TIMEOUT_MS });
  if (!r.ok || r.value === null) return null;
  try {
    const decoded: unknown = JSON.parse(JSON.parse(r.value) as string);
    return Array.isArray(decoded) ? decoded.map(String) : null;
  } catch {
    return null;
  }
}

export const jsDebug: EnvironmentSpec = {
  name: 'js_debug',
  description: 'Fix a buggy JavaScript function; hidden tests check the fix.',
  tags: ['code', 'debug', 'tool-use'],
  requiredTools: ['js'],
  systemStyle: 'compact',
  sample(rng, difficulty): TaskItem {
    const template: BugTemplate = rng.pick(JS_BUGS.filter((b) => b.level === difficulty));
    const fn = rng.pick(template.names);
    const k = template.k ? rng.int(template.k[0], template.k[1]) : null;
    const buggy = fill(template.buggy, fn, k);
    const prompt = JS_DEBUG_PROMPT.replace('{task}', fill(template.task, fn, k)).replace('{code}', buggy);
    return {
      prompt,
      data: {
        template: template.id,
        fn,
        k,
        buggy,
        fixed: fill(template.fixed, fn, k),
        hint: fill(template.hint, fn, k),
        tests: template.tests,
        demo: template.demo,
      },
      key: `${template.id}|${fn}|${k ?? ''}`,
    };
  },
  async evaluate(task: Task, trajectory: Trajectory): Promise<number | null> {
    const { fn, fixed, tests } = task.data as { fn: string; fixed: string; tests: unknown[][] };
    const expected = await runTests(fixed, fn, tests);
    if (expected === null) return null;
    const code = extractCode(finalAnswer(trajectory));
    if (code === '') return 0;
    const got = await runTests(code, fn, tests);
    if (got === null) return 0;
    const passed = expected.filter((e, i) => got[i] === e).length / expected.length;
    // The tool part: the fix was tried in the sandbox before it was given. Without that, half credit.
    const tried = successfulCalls(trajectory, ['js']).some((call) => callSource(call).includes(fn));
    return tried ? passed : passed / 2;
  },
  expert(task: Task): string[] {
    const { fn, fixed, hint, demo } = task.data as { fn: string; fixed: string; hint: string; demo: unknown[] };
    const check = `${fixed}\n${fn}(${demo.map((a) => JSON.stringify(a)).join(', ')})`;
    return [callTurn(hint, [{ name: 'js', arguments: { code: check } }]), answerTurn(`\`\`\`js\n${fixed}\n\`\`\``)];
  },
};
