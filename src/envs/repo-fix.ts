/**
 * repo_fix: one task across three systems. A test file in a git repository (`tests/tax.txt`) names the
 * source it tests (`src/tax.js`) and the values it expects (`tax(2) == 10`); the function there has one
 * wrong constant. The work: read the test (sh), read the source and any helper it uses (sh), write the
 * fix (sh), run it in js on the test's cases, and commit it (git), on a new branch from level 2. Levels:
 * one function on main (6 calls), on a branch (7), through a helper in another file (8), two functions
 * (9), two through helpers (11). In RECOVERY_SHARE of the items one source is a module
 * (`export function tax…`): running it as written in js fails with "SyntaxError: unsupported keyword:
 * export", and success needs the check run again without the keyword.
 *
 * Success: the final state, from replaying the sh and git calls (final-state.ts), is right — on the asked
 * branch, the last commit has the asked message and holds every fix (no fixed file left uncommitted),
 * each fixed function gives the reference values on the test's cases and on 0–9, and no other file changed
 * (editing the test to match the bug fixes nothing); and the work was done in order (step-evidence.ts):
 * the test read, then each source, then each helper, then a successful js call that runs the committed
 * code of every fixed function on the test's cases and shows the expected values. Either part alone is
 * half credit.
 */
import type { Task, Trajectory } from '../contracts.ts';
import type { Rng } from '../rng.ts';
import { runJsIsolated } from '../sandbox/index.ts';
import { RECOVERY_SHARE } from './data/multi-step.ts';
import {
  ADDEND_RANGE,
  CHECK_INPUTS,
  FIX_DECOYS,
  FIX_LEVELS,
  FIX_NAMES,
  FIX_PROMPT_BRANCH,
  FIX_PROMPT_MAIN,
  HELPER_ADD_RANGE,
  HELPER_NAMES,
  MULTIPLIER_RANGE,
  SUITE_NAMES,
} from './data/repo-fix.ts';
import { answerTurn, callTurn, type ExpertCall } from './expert-text.ts';
import { finalState } from './final-state.ts';
import { allNeedsMet, readNeed, type StepNeed } from './step-evidence.ts';
import { callSource, containsToken, scoreParts, successfulCalls } from './evidence.ts';
import type { EnvironmentSpec, ToolboxSetup } from './types.ts';

export interface FixFunction {
  name: string;
  path: string;
  /** The helper it calls (`function base(x){return x+2}`), kept in its own file, or null. */
  helper: { name: string; path: string; code: string } | null;
  /** The function as the repository has it, and as the reference fix (one line each, without `export`). */
  buggy: string;
  fixed: string;
  /** Its file declares it `export function …` (a recovery item). */
  exported: boolean;
  /** The source file's text: a `// uses` line when there is a helper, then the function. */
  file: string;
  /** The test's cases [x, expected]. */
  cases: [number, number][];
  /** The reference fix's values on CHECK_INPUTS. */
  checks: number[];
}

export interface RepoFixData {
  test: string;
  functions: FixFunction[];
  branch: string | null;
  message: string;
  files: Record<string, string>;
  /** True when the first reasonable attempt fails by design (RECOVERY_SHARE). */
  recovery: boolean;
  [key: string]: unknown;
}

const TOOLS = ['sh', 'git'] as const;
const squash = (code: string): string => code.replace(/\s+/g, '');
/** The code a source file runs as a script: without comment lines and `export`. */
const scriptOf = (file: string): string =>
  file
    .split('\n')
    .filter((l) => !l.trim().startsWith('//'))
    .join('\n')
    .replace(/^\s*export\s+/gm, '')
    .trim();
const body = (name: string, inner: string, a: number, b: number): string =>
  `function ${name}(x){return ${inner}*${a}+${b}}`;

/** One function with one wrong constant (its multiplier or its addend), its test's cases and its reference values. */
function drawFunction(rng: Rng, name: string, helperName: string | null, exported: boolean): FixFunction {
  const a = rng.int(...MULTIPLIER_RANGE);
  const b = rng.int(...ADDEND_RANGE);
  const c = rng.int(...HELPER_ADD_RANGE);
  const wrongA = rng.chance(0.5);
  const other = (v: number, [lo, hi]: [number, number]) =>
    rng.pick(Array.from({ length: hi - lo + 1 }, (_, i) => lo + i).filter((w) => w !== v));
  const [a2, b2] = wrongA ? [other(a, MULTIPLIER_RANGE), b] : [a, other(b, ADDEND_RANGE)];
  const helper = helperName
    ? { name: helperName, path: `src/${helperName}.js`, code: `function ${helperName}(x){return x+${c}}` }
    : null;
  const inner = helper ? `${helper.name}(x)` : 'x';
  const value = (x: number) => (helper ? x + c : x) * a + b;
  const buggy = body(name, inner, a2, b2);
  const [x1, x2] = rng.shuffle(Array.from({ length: 9 }, (_, i) => i + 1));
  return {
    name,
    path: `src/${name}.js`,
    helper,
    buggy,
    fixed: body(name, inner, a, b),
    exported,
    file: `${helper ? `// uses ${helper.path}\n` : ''}${exported ? 'export ' : ''}${buggy}\n`,
    cases: [x1, x2].sort((p, q) => p - q).map((x) => [x, value(x)]),
    checks: CHECK_INPUTS.map(value),
  };
}

const testBlock = (f: Pick<FixFunction, 'name' | 'path' | 'cases'>): string =>
  `tests ${f.name} in ${f.path}\n${f.cases.map(([x, y]) => `${f.name}(${x}) == ${y}`).join('\n')}\n`;

/** True when the file's function, run in QuickJS beside its helper, gives the reference values. */
async function fixes(f: FixFunction, file: string | undefined): Promise<boolean> {
  if (file === undefined) return false;
  const inputs = [...f.cases.map(([x]) => x), ...CHECK_INPUTS];
  const want = [...f.cases.map(([, y]) => y), ...f.checks];
  const r = await runJsIsolated(
    `${f.helper?.code ?? ''}\n${scriptOf(file)}\nJSON.stringify(${JSON.stringify(inputs)}.map((x) => ${f.name}(x)))`,
    { timeoutMs: 1000 },
  );
  return r.ok && r.value !== null && JSON.parse(r.value) === JSON.stringify(want);
}

const sh = (command: string): ExpertCall => ({ name: 'sh', arguments: { command } });
const git = (command: string): ExpertCall => ({ name: 'git', arguments: { command } });
const setupOf = (data: RepoFixData): ToolboxSetup => ({ files: data.files, gitRepo: true });

export const repoFix: EnvironmentSpec = {
  name: 'repo_fix',
  description:
    'Fix the function a failing test names: read the test and source with sh, check the fix in js, commit it with git.',
  tags: ['code', 'git', 'shell', 'files', 'multi-step', 'multi-tool', 'tool-use', 'curriculum-4'],
  requiredTools: ['sh', 'js', 'git'],
  systemStyle: 'compact',
  sample(rng, difficulty) {
    const level = FIX_LEVELS[difficulty];
    const names = rng.shuffle(FIX_NAMES);
    const helpers = rng.shuffle(HELPER_NAMES);
    const exported = rng.chance(RECOVERY_SHARE) ? rng.int(0, level.functions - 1) : -1;
    const functions = names
      .slice(0, level.functions)
      .map((name, i) => drawFunction(rng, name, level.helpers ? helpers[i] : null, i === exported));
    const suite = level.functions > 1 ? rng.pick(SUITE_NAMES) : functions[0].name;
    const test = `tests/${suite}.txt`;
    const files: Record<string, string> = { [test]: functions.map(testBlock).join('') };
    // Functions that pass their tests: the broken one is found by following the test, not by listing src.
    for (const name of names.slice(level.functions, level.functions + FIX_DECOYS)) {
      const f = drawFunction(rng, name, null, false);
      files[f.path] = `${f.fixed}\n`;
      files[`tests/${name}.txt`] = testBlock(f);
    }
    for (const f of functions) {
      files[f.path] = f.file;
      if (f.helper) files[f.helper.path] = `${f.helper.code}\n`;
    }
    const branch = level.branch ? `fix-${suite}` : null;
    const message = `fix ${suite}`;
    const template = branch ? FIX_PROMPT_BRANCH : FIX_PROMPT_MAIN;
    const prompt = template
      .replace('{test}', test)
      .replace('{what}', functions.length > 1 ? 'functions' : 'function')
      .replace('{branch}', branch ?? '')
      .replace('{message}', message);
    return {
      prompt,
      data: { test, functions, branch, message, files, recovery: exported >= 0 } satisfies RepoFixData,
      key: JSON.stringify([test, branch, functions.map((f) => [f.file, f.helper?.code ?? '', f.cases])]),
    };
  },
  toolbox: (task: Task): ToolboxSetup => setupOf(task.data as RepoFixData),
  async evaluate(task: Task, trajectory: Trajectory) {
    const data = task.data as RepoFixData;
    if (!mayScore(data, trajectory)) return 0;
    const { repo, files } = await finalState(setupOf(data), TOOLS, trajectory);
    const fixedPaths = new Set(data.functions.map((f) => f.path));
    const unchanged = Object.entries(data.files).every(
      ([path, text]) => fixedPaths.has(path) || files[path]?.trimEnd() === text.trimEnd(),
    );
    const committed =
      repo !== null &&
      repo.branch === (data.branch ?? 'main') &&
      repo.log[0]?.message.trim() === data.message &&
      data.functions.every((f) => !(f.path in repo.status));
    const state =
      committed && unchanged && (await Promise.all(data.functions.map((f) => fixes(f, files[f.path])))).every(Boolean);
    return scoreParts(workInOrder(data, files, trajectory), state);
  },
  expert(task) {
    const { test, functions, branch, message } = task.data as RepoFixData;
    const turns = [callTurn('Read the test.', [sh(`cat ${test}`)])];
    for (const f of functions) {
      turns.push(callTurn('Read what it tests.', [sh(`cat ${f.path}`)]));
      if (f.helper) turns.push(callTurn('Read the helper it uses.', [sh(`cat ${f.helper.path}`)]));
    }
    if (branch) turns.push(callTurn('Work on a new branch.', [git(`checkout -b ${branch}`)]));
    for (const f of functions) {
      const fixedFile = f.file.replace(f.buggy, f.fixed);
      const write = f.helper
        ? `printf '${fixedFile.replaceAll('\n', '\\n')}' > ${f.path}`
        : `echo '${fixedFile.trimEnd()}' > ${f.path}`;
      turns.push(callTurn(`Fix ${f.name}.`, [sh(write)]));
    }
    const run = (code: string[]) => ({
      name: 'js',
      arguments: {
        code: [...code, `[${functions.flatMap((f) => f.cases.map(([x]) => `${f.name}(${x})`)).join(', ')}]`].join('\n'),
      },
    });
    const asFiles = functions.flatMap((f) => [
      ...(f.helper ? [f.helper.code] : []),
      `${f.exported ? 'export ' : ''}${f.fixed}`,
    ]);
    turns.push(callTurn('Check it on the test cases.', [run(asFiles)]));
    if (functions.some((f) => f.exported))
      turns.push(
        callTurn('A script cannot export. Run it without.', [run(asFiles.map((c) => c.replace(/^export /, '')))]),
      );
    turns.push(callTurn('Commit it.', [git(`add ${functions.map((f) => f.path).join(' ')}`)]));
    turns.push(callTurn(null, [git(`commit -m "${message}"`)]));
    return [...turns, answerTurn('Done.')];
  },
};

/**
 * False when neither half can be earned, so the replay is skipped (the task-blind policies' probes are
 * thousands of such episodes): the state half needs a commit, whose message the sandbox takes only from the
 * command line, so some call names it (compared without spaces, quotes and backslashes); the work half
 * needs a successful js call.
 */
function mayScore(data: RepoFixData, trajectory: Trajectory): boolean {
  const bare = (text: string) => text.replace(/[\s'"\\]/g, '');
  const message = bare(data.message);
  return (
    successfulCalls(trajectory, ['js']).length > 0 ||
    trajectory.steps.some(
      (s) =>
        s.tool_call &&
        (TOOLS as readonly string[]).includes(s.tool_call.tool_name) &&
        bare(callSource(s.tool_call)).includes(message),
    )
  );
}

/** The test read, then each source, then each helper, then a js run of the committed fixes on the test's cases. */
function workInOrder(data: RepoFixData, files: Record<string, string>, trajectory: Trajectory): boolean {
  const needs: StepNeed[] = [readNeed(data.test, data.files[data.test].trimEnd())];
  for (const f of data.functions) {
    const source = needs.push(readNeed(f.path, f.buggy, [0])) - 1;
    if (f.helper) needs.push(readNeed(f.helper.path, f.helper.code, [source]));
  }
  const reads = needs.map((_, i) => i);
  const committed = data.functions.map((f) => squash(scriptOf(files[f.path] ?? '')));
  needs.push({
    after: reads,
    tools: ['js'],
    met: (source, result) =>
      data.functions.every(
        (f, i) =>
          committed[i] !== '' &&
          squash(source).includes(committed[i]) &&
          (!f.helper || containsToken(source, `function ${f.helper.name}`)),
      ) &&
      data.functions.every((f) =>
        f.cases.every(([x, y]) => squash(source).includes(`${f.name}(${x})`) && containsToken(result, String(y))),
      ),
  });
  return allNeedsMet(trajectory, needs);
}
