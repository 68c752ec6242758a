/**
 * repo_fix: a failing test's function fixed across sh, js and git, 6 to 11 calls at levels 1–5, scored on
 * the replayed repository and the order of the work. Editing the test instead, a fix that only fits the
 * test's two cases, no js check or a check of other code, no commit, the wrong branch or message, reading
 * every file at once, or giving up after the designed failure (an `export` a script cannot run) never
 * succeeds.
 */
import { describe, expect, it } from 'vitest';
import type { Task } from '../../src/contracts.ts';
import { callTurn } from '../../src/envs/expert-text.ts';
import { getEnvironment } from '../../src/envs/registry.ts';
import type { RepoFixData } from '../../src/envs/repo-fix.ts';
import { runEpisode } from '../../src/rollout/episode.ts';
import { expertTrajectory } from '../../src/rollout/expert.ts';
import { ScriptedPolicy } from '../../src/rollout/scripted-policy.ts';

const env = getEnvironment('repo_fix');
const sh = (command: string) => callTurn(null, [{ name: 'sh', arguments: { command } }]);
const git = (command: string) => callTurn(null, [{ name: 'git', arguments: { command } }]);
const js = (code: string) => callTurn(null, [{ name: 'js', arguments: { code } }]);

async function play(task: Task, turns: string[]) {
  const trajectory = await runEpisode({
    policy: new ScriptedPolicy({ turns }),
    env,
    task,
    seed: 1,
    maxSteps: turns.length,
  });
  return { trajectory, score: await env.evaluate(task, trajectory) };
}

function itemAt(level: number, recovery: boolean): Task {
  for (let seed = 0; ; seed++) {
    const task = env.generate(seed, level, 'test');
    if (task.data.recovery === recovery) return task;
  }
}

const data = (task: Task) => task.data as RepoFixData;

/** The expert's work on a one-function item (no helper), with each part replaceable. */
function work(
  task: Task,
  parts: { reads?: string[]; fix?: string; check?: string | null; commit?: string[] } = {},
): string[] {
  const { test, functions, branch, message } = data(task);
  const [f] = functions;
  const calls = f.cases.map(([x]) => `${f.name}(${x})`).join(', ');
  return [
    ...(parts.reads ?? [sh(`cat ${test}`), sh(`cat ${f.path}`)]),
    ...(branch ? [git(`checkout -b ${branch}`)] : []),
    sh(`echo '${parts.fix ?? f.fixed}' > ${f.path}`),
    ...(parts.check === null ? [] : [js(parts.check ?? `${f.fixed}\n[${calls}]`)]),
    ...(parts.commit ?? [git(`add ${f.path}`), git(`commit -m "${message}"`)]),
    'Done.',
  ];
}

describe('repo_fix', () => {
  it('takes 6, 7, 8, 9 and 11 calls across sh, js and git', async () => {
    const calls = [];
    for (const level of env.difficulties) {
      const t = await expertTrajectory(env, itemAt(level, false));
      expect(t.judge_score).toBe(1);
      expect(new Set(t.steps.map((s) => s.tool_call!.tool_name))).toEqual(new Set(['sh', 'js', 'git']));
      calls.push(t.steps.length);
    }
    expect(calls).toEqual([6, 7, 8, 9, 11]);
  });

  it('succeeds with the work as the expert does it, and fails each shortcut', async () => {
    for (const level of [1, 2]) {
      const task = itemAt(level, false);
      const { test, functions, message, files } = data(task);
      const [f] = functions;
      expect((await play(task, work(task))).score, `level ${level}: the work`).toBe(1);
      // The test rewritten to expect what the buggy function gives, checked and committed.
      const buggyValues = f.cases.map(
        ([x]) => `${f.name}(${x}) == ${new Function(`${f.buggy}; return ${f.name}(${x})`)()}`,
      );
      const editTest = [
        sh(`cat ${test}`),
        sh(`cat ${f.path}`),
        sh(`printf 'tests ${f.name} in ${f.path}\\n${buggyValues.join('\\n')}\\n' > ${test}`),
        git(`add ${test}`),
        git(`commit -m "${message}"`),
        'Done.',
      ];
      expect((await play(task, editTest)).score).toBeLessThan(1);
      // A function that only fits the test's two cases.
      const [[x1, y1], [, y2]] = f.cases;
      const fitted = `function ${f.name}(x){return x==${x1}?${y1}:${y2}}`;
      expect(
        (
          await play(
            task,
            work(task, { fix: fitted, check: `${fitted}\n[${f.cases.map(([x]) => `${f.name}(${x})`).join(', ')}]` }),
          )
        ).score,
      ).toBeLessThan(1);
      // No js check; a check of the buggy code; no commit; the message or the branch wrong.
      expect((await play(task, work(task, { check: null }))).score).toBe(0.5);
      expect(
        (await play(task, work(task, { check: `${f.buggy}\n[${f.cases.map(([x]) => `${f.name}(${x})`).join(', ')}]` })))
          .score,
      ).toBe(0.5);
      expect((await play(task, work(task, { commit: [] }))).score).toBe(0.5);
      expect(
        (await play(task, work(task, { commit: [git(`add ${f.path}`), git('commit -m "fix typo"')] }))).score,
      ).toBe(0.5);
      if (level === 2) {
        const onMain = work(task).filter((t) => !t.includes('checkout -b'));
        expect((await play(task, onMain)).score).toBe(0.5);
      }
      // The fix committed together with another test file deleted: the fix only may change.
      const decoyTest = Object.keys(files).find((p) => p.startsWith('tests/') && p !== test)!;
      expect(
        (await play(task, work(task, { commit: [sh(`rm ${decoyTest}`), git('add .'), git(`commit -m "${message}"`)] })))
          .score,
      ).toBe(0.5);
      // Every file read in one call, repeated: it never followed the test to the source.
      const dump = sh(`cat ${Object.keys(files).sort().join(' ')}`);
      expect((await play(task, work(task, { reads: [dump, dump, dump] }))).score).toBe(0.5);
    }
  });

  it('needs the helper read and defined in the check where the function uses one', async () => {
    const task = itemAt(3, false);
    const turns = env.expert!(task);
    expect((await play(task, turns)).score).toBe(1);
    const [f] = data(task).functions;
    expect(f.helper).not.toBeNull();
    const withoutHelperRead = turns.filter((t) => !t.includes(`cat ${f.helper!.path}`));
    expect((await play(task, withoutHelperRead)).score).toBe(0.5);
  });

  it('builds recovery items whose first check fails informatively, and a give-up fails', async () => {
    let recovering = 0;
    for (let seed = 0; seed < 60; seed++) if (env.generate(seed, 3, 'train').data.recovery === true) recovering++;
    expect(recovering).toBeGreaterThan(8); // about 30% of 60
    expect(recovering).toBeLessThan(30);

    for (const level of [1, 5]) {
      const task = itemAt(level, true);
      const turns = env.expert!(task);
      const expert = await expertTrajectory(env, task);
      expect(expert.judge_score).toBe(1);
      const failed = expert.steps.filter((s) => s.tool_call?.error);
      expect(failed).toHaveLength(1);
      expect(failed[0].tool_call!.error).toMatch(/SyntaxError: unsupported keyword: export/);
      const at = expert.steps.indexOf(failed[0]);
      // Giving up on the check after the failure and committing anyway.
      expect((await play(task, [...turns.slice(0, at + 1), ...turns.slice(at + 2)])).score).toBe(0.5);
    }
  });
});
