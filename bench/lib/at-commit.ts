/**
 * Measures an earlier commit of Spindle in the same run as the current tree, so a "×N faster than at
 * commit C" figure has its reference taken under the same load rather than quoted from another day
 * (a quoted 112 tok/s for C was; the same machine on another day ran C's own code at 84–104 tok/s).
 *
 * `runAtCommits` checks the commit out into a temporary git worktree sharing this tree's node_modules,
 * writes the same script into both trees, and runs it alternately in each, `rounds` times. The script
 * imports `./src/...` and prints one JSON line last. Needs git and the commit in the clone; otherwise
 * the result says why it was skipped.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface AtCommitRuns<T> {
  commit: string;
  /** One parsed result per round, in each tree. */
  then: T[];
  now: T[];
}

const SCRIPT_NAME = '.bench-at-commit.ts';

function git(args: string[], cwd = process.cwd()): { ok: boolean; out: string } {
  const run = spawnSync('git', args, { cwd, encoding: 'utf8' });
  return { ok: run.status === 0, out: (run.stdout || run.stderr || '').trim() };
}

function runScript<T>(tree: string): T {
  const run = spawnSync(process.execPath, ['--import', 'tsx', SCRIPT_NAME], {
    cwd: tree,
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  const last = run.stdout.trim().split('\n').pop() ?? '';
  if (run.status !== 0 || !last.startsWith('{'))
    throw new Error(`script failed in ${tree}: ${run.stderr.trim().split('\n').slice(-3).join(' / ')}`);
  return JSON.parse(last) as T;
}

export function runAtCommits<T>(commit: string, script: string, rounds: number): AtCommitRuns<T> | { skipped: string } {
  if (!git(['cat-file', '-e', `${commit}^{commit}`]).ok)
    return { skipped: `commit ${commit} is not in this clone (a shallow clone?)` };
  const tree = path.join(mkdtempSync(path.join(tmpdir(), 'spindle-at-')), 'tree');
  const added = git(['worktree', 'add', '--detach', tree, commit]);
  if (!added.ok) return { skipped: `git worktree add failed: ${added.out}` };
  const here = process.cwd();
  try {
    symlinkSync(path.join(here, 'node_modules'), path.join(tree, 'node_modules'));
    for (const dir of [tree, here]) writeFileSync(path.join(dir, SCRIPT_NAME), script);
    const runs: AtCommitRuns<T> = { commit, then: [], now: [] };
    for (let round = 0; round < rounds; round++) {
      runs.then.push(runScript<T>(tree));
      runs.now.push(runScript<T>(here));
    }
    return runs;
  } catch (err) {
    return { skipped: err instanceof Error ? err.message : String(err) };
  } finally {
    rmSync(path.join(here, SCRIPT_NAME), { force: true });
    git(['worktree', 'remove', '--force', tree]);
    rmSync(path.dirname(tree), { recursive: true, force: true });
  }
}
