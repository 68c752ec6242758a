/**
 * The `git` tool: git subcommands run by isomorphic-git on the episode's VirtualFs (the same files the
 * `sh` tool sees), repository at `/`. Supported: init, status, add, rm, commit -m, log [--oneline] [-n N],
 * branch [-d] [name], checkout [-b] <branch|file>, switch [-c], merge, diff [--cached] [--name-only],
 * reset <file>, tag, rev-parse. Output imitates git's own short forms so a model trained here reads real git.
 *
 * Contained: no remotes, fetch, push or clone (no network), no hooks, no config files outside the
 * repository. Commit times are a counter from a fixed epoch, so the same actions give the same commit
 * ids (episodes replay). Not contained: an operation that outlives the per-call timeout keeps running
 * in the background of the worker until it finishes (it only touches the in-memory fs).
 */
import * as git from 'isomorphic-git';
import { Buffer as BufferPolyfill } from 'buffer';
import type { ShOutput } from './sh.ts';
import { resolvePath, type VirtualFs } from './vfs.ts';

// isomorphic-git uses the global Buffer, which browsers and workers lack.
const globalWithBuffer = globalThis as { Buffer?: unknown };
if (globalWithBuffer.Buffer === undefined) globalWithBuffer.Buffer = BufferPolyfill;

const DIR = '/';
const EPOCH_SECONDS = 1_700_000_000;
const AUTHOR_NAME = 'Spindle Agent';
const AUTHOR_EMAIL = 'agent@spindle.local';
const MAX_DIFF_LINES = 400;

const ok = (stdout = ''): ShOutput => ({ stdout, stderr: '', code: 0 });
const fail = (stderr: string, code = 1): ShOutput => ({
  stdout: '',
  stderr: stderr.endsWith('\n') ? stderr : stderr + '\n',
  code,
});

export type StatusRow = [string, number, number, number];

export const GIT_USAGE =
  'git commands: init | status | add <path>|. | rm [--cached] <path> | commit -m "msg" | log [--oneline] [-n N] [<branch>] [-- <path>] | ' +
  'branch [-d] [name] | checkout [-b] <branch> | checkout -- <file> | switch [-c] <branch> | merge <branch> | ' +
  'diff [--cached] [--name-only] | reset <file> | tag [name] | rev-parse [--abbrev-ref] HEAD';

/** Short-status letters (index, worktree) from an isomorphic-git statusMatrix row. */
export function statusCode([, head, workdir, stage]: StatusRow): string {
  if (head === 0 && stage === 0) return workdir === 0 ? '' : '??';
  const x = head === 0 ? 'A' : stage === 0 ? 'D' : stage === 1 ? ' ' : 'M';
  let y = ' ';
  if (stage !== 0) {
    if (workdir === 0) y = 'D';
    else if (stage === 1 ? workdir !== 1 : stage === 3) y = 'M';
  }
  return x + y === '  ' ? '' : x + y;
}

/** Minimal line diff (LCS), changed lines only. */
function lineDiff(before: string, after: string): string[] {
  const a = before.split('\n');
  const b = after.split('\n');
  if (a.length > MAX_DIFF_LINES || b.length > MAX_DIFF_LINES) return ['(file too large to diff)'];
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      i++;
      j++;
    } else if (i < a.length && (j === b.length || lcs[i + 1][j] >= lcs[i][j + 1])) out.push('-' + a[i++]);
    else out.push('+' + b[j++]);
  }
  return out;
}

export class GitTool {
  private readonly cache = {};
  private commits = 0;

  constructor(private readonly fs: VirtualFs) {}

  private get base() {
    return { fs: this.fs, dir: DIR, cache: this.cache };
  }

  private author() {
    // One second per commit from a fixed epoch: deterministic ids and a strictly ordered log.
    return { name: AUTHOR_NAME, email: AUTHOR_EMAIL, timestamp: EPOCH_SECONDS + ++this.commits, timezoneOffset: 0 };
  }

  isRepo(): boolean {
    return this.fs.isDir('/.git');
  }

  async init(): Promise<void> {
    await git.init({ fs: this.fs, dir: DIR, defaultBranch: 'main' });
  }

  async currentBranch(): Promise<string | null> {
    return (await git.currentBranch({ fs: this.fs, dir: DIR })) ?? null;
  }

  async hasCommits(): Promise<boolean> {
    try {
      await git.resolveRef({ fs: this.fs, dir: DIR, ref: 'HEAD' });
      return true;
    } catch {
      return false;
    }
  }

  async matrix(): Promise<StatusRow[]> {
    return (await git.statusMatrix({ ...this.base })) as StatusRow[];
  }

  /** Stage every change (`git add -A`). */
  async addAll(): Promise<void> {
    for (const [file, , workdir] of await this.matrix()) {
      if (workdir === 0) await git.remove({ ...this.base, filepath: file });
      else await git.add({ ...this.base, filepath: file });
    }
  }

  async commit(message: string): Promise<string> {
    return git.commit({ ...this.base, message, author: this.author() });
  }

  async log(): Promise<{ oid: string; message: string }[]> {
    if (!(await this.hasCommits())) return [];
    const entries = await git.log({ ...this.base });
    return entries.map((e) => ({ oid: e.oid, message: e.commit.message.trim() }));
  }

  async branches(): Promise<string[]> {
    return git.listBranches({ fs: this.fs, dir: DIR });
  }

  /** Run one git command (argv without the leading "git"). Failures come back as stderr, never thrown. */
  async run(argv: string[], cwd = '/'): Promise<ShOutput> {
    const [sub, ...args] = argv[0] === 'git' ? argv.slice(1) : argv;
    if (!sub || sub === 'help' || sub === '--help') return ok(GIT_USAGE + '\n');
    if (sub !== 'init' && !this.isRepo()) return fail('fatal: not a git repository (run: git init)', 128);
    try {
      const handler = this.commands[sub];
      if (!handler) return fail(`git: '${sub}' is not a supported git command. ${GIT_USAGE}`);
      return await handler(args, cwd);
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      return fail(`fatal: ${message}`, 128);
    }
  }

  /** Paths given relative to the shell's cwd → repository-relative paths. */
  private repoPath(path: string, cwd: string): string {
    return resolvePath(path, cwd).slice(1);
  }

  private readonly commands: Record<string, (args: string[], cwd: string) => Promise<ShOutput>> = {
    init: async () => {
      const existed = this.isRepo();
      await this.init();
      return ok(
        existed ? 'Reinitialized existing Git repository in /.git/\n' : 'Initialized empty Git repository in /.git/\n',
      );
    },

    status: async () => {
      const branch = await this.currentBranch();
      const rows = (await this.matrix()).map((r) => [statusCode(r), r[0]] as const).filter(([code]) => code !== '');
      const head = `On branch ${branch ?? '(detached HEAD)'}\n`;
      if (rows.length === 0)
        return ok(
          head +
            ((await this.hasCommits())
              ? 'nothing to commit, working tree clean\n'
              : 'No commits yet\nnothing to commit\n'),
        );
      return ok(head + rows.map(([code, file]) => `${code} ${file}`).join('\n') + '\n');
    },

    add: async (args, cwd) => {
      const paths = args.filter((a) => !a.startsWith('-'));
      if (args.includes('-A') || args.includes('--all') || (paths.includes('.') && cwd === '/')) {
        await this.addAll();
        return ok();
      }
      if (paths.length === 0) return fail('Nothing specified, nothing added. (try: git add <file> or git add .)');
      const rows = await this.matrix();
      for (const p of paths) {
        const rel = this.repoPath(p, cwd);
        const under = rows.filter(([f]) => f === rel || rel === '' || f.startsWith(rel + '/'));
        if (under.length === 0) return fail(`fatal: pathspec '${p}' did not match any files`, 128);
        for (const [file, , workdir] of under) {
          if (workdir === 0) await git.remove({ ...this.base, filepath: file });
          else await git.add({ ...this.base, filepath: file });
        }
      }
      return ok();
    },

    rm: async (args, cwd) => {
      const cached = args.includes('--cached');
      const paths = args.filter((a) => !a.startsWith('-'));
      if (paths.length === 0) return fail('usage: git rm [--cached] <file>...');
      const tracked = new Set((await this.matrix()).filter(([, h, , s]) => h !== 0 || s !== 0).map(([f]) => f));
      const out: string[] = [];
      for (const p of paths) {
        const rel = this.repoPath(p, cwd);
        if (!tracked.has(rel)) return fail(`fatal: pathspec '${p}' did not match any files`, 128);
        await git.remove({ ...this.base, filepath: rel });
        if (!cached && this.fs.exists('/' + rel)) this.fs.remove('/' + rel);
        out.push(`rm '${rel}'`);
      }
      return ok(out.join('\n') + '\n');
    },

    commit: async (args) => {
      let message: string | null = null;
      let all = false;
      for (let i = 0; i < args.length; i++) {
        const a = args[i];
        if (a === '-m' || a === '--message') message = args[++i] ?? null;
        else if (a === '-am' || (a === '-a' && args[i + 1] === '-m')) {
          all = true;
          if (a === '-a') i++;
          message = args[++i] ?? null;
        } else if (a === '-a' || a === '--all') all = true;
        else if (a.startsWith('--message=')) message = a.slice('--message='.length);
      }
      if (!message) return fail('error: a commit message is required: git commit -m "message"');
      if (all) {
        for (const [file, head, workdir] of await this.matrix()) {
          if (head === 0) continue; // -a does not add untracked files
          if (workdir === 0) await git.remove({ ...this.base, filepath: file });
          else await git.add({ ...this.base, filepath: file });
        }
      }
      const staged = (await this.matrix()).filter((r) => /^[AMD]/.test(statusCode(r)));
      if (staged.length === 0) {
        const codes = (await this.matrix()).map(statusCode);
        if (codes.some((c) => c.length === 2 && c[1] !== ' ' && c !== '??'))
          return fail('no changes added to commit (use "git add" and/or "git commit -a")');
        if (codes.includes('??'))
          return fail('nothing added to commit but untracked files present (use "git add" to track)');
        return fail('nothing to commit, working tree clean');
      }
      const oid = await this.commit(message);
      const branch = (await this.currentBranch()) ?? 'HEAD';
      return ok(
        `[${branch} ${oid.slice(0, 7)}] ${message.split('\n')[0]}\n ${staged.length} file${staged.length === 1 ? '' : 's'} changed\n`,
      );
    },

    log: async (args, cwd) => {
      const oneline = args.includes('--oneline');
      let limit = Infinity;
      // Operands: a branch or tag to start from, and a path whose commits to list (after `--`, or any operand that is no ref).
      const operands: string[] = [];
      const paths: string[] = [];
      for (let i = 0; i < args.length; i++) {
        if (args[i] === '-n') limit = Number(args[++i]);
        else if (/^-\d+$/.test(args[i])) limit = Number(args[i].slice(1));
        else if (args[i].startsWith('--max-count=')) limit = Number(args[i].split('=')[1]);
        else if (args[i] === '--') {
          paths.push(...args.slice(i + 1));
          break;
        } else if (!args[i].startsWith('-')) operands.push(args[i]);
      }
      if (!(await this.hasCommits())) {
        return fail(
          `fatal: your current branch '${(await this.currentBranch()) ?? 'main'}' does not have any commits yet`,
          128,
        );
      }
      const refs = [...(await this.branches()), ...(await git.listTags({ fs: this.fs, dir: DIR })), 'HEAD'];
      const ref = operands.find((o) => refs.includes(o));
      paths.push(...operands.filter((o) => o !== ref));
      if (paths.length > 1)
        return fail('fatal: log takes at most one path here (git log [-n N] [<branch>] [-- <path>])');
      const filepath = paths.length ? this.repoPath(paths[0], cwd) : undefined;
      let all: Awaited<ReturnType<typeof git.log>>;
      try {
        all = await git.log({ ...this.base, ref, filepath });
      } catch {
        if (filepath === undefined) throw new Error(`bad revision '${ref ?? 'HEAD'}'`);
        return fail(`fatal: ambiguous argument '${paths[0]}': unknown revision or path not in the working tree.`, 128);
      }
      const entries = all.slice(0, Number.isFinite(limit) ? limit : undefined);
      if (oneline)
        return ok(entries.map((e) => `${e.oid.slice(0, 7)} ${e.commit.message.split('\n')[0]}`).join('\n') + '\n');
      return ok(
        entries
          .map((e) => {
            const date = new Date(e.commit.author.timestamp * 1000).toUTCString();
            const body = e.commit.message
              .trim()
              .split('\n')
              .map((l) => `    ${l}`)
              .join('\n');
            return `commit ${e.oid}\nAuthor: ${e.commit.author.name} <${e.commit.author.email}>\nDate:   ${date}\n\n${body}\n`;
          })
          .join('\n'),
      );
    },

    branch: async (args) => {
      const del = args.find((a) => a === '-d' || a === '-D' || a === '--delete');
      const names = args.filter((a) => !a.startsWith('-'));
      if (del) {
        if (names.length === 0) return fail('fatal: branch name required');
        for (const n of names) await git.deleteBranch({ fs: this.fs, dir: DIR, ref: n });
        return ok(names.map((n) => `Deleted branch ${n}.`).join('\n') + '\n');
      }
      if (names.length > 0) {
        if (!(await this.hasCommits()))
          return fail(`fatal: not a valid object name: 'main' (commit something first)`, 128);
        await git.branch({ fs: this.fs, dir: DIR, ref: names[0] });
        return ok();
      }
      const current = await this.currentBranch();
      const all = await this.branches();
      return ok(all.map((b) => `${b === current ? '*' : ' '} ${b}`).join('\n') + (all.length ? '\n' : ''));
    },

    checkout: async (args, cwd) => this.checkout(args, cwd, '-b'),
    switch: async (args, cwd) => this.checkout(args, cwd, '-c'),

    merge: async (args) => {
      const theirs = args.find((a) => !a.startsWith('-'));
      if (!theirs) return fail('usage: git merge <branch>');
      const ours = (await this.currentBranch()) ?? 'HEAD';
      const result = await git.merge({
        ...this.base,
        ours,
        theirs,
        author: this.author(),
        abortOnConflict: true,
        message: `Merge branch '${theirs}'`,
      });
      await git.checkout({ ...this.base, ref: ours, force: true });
      if (result.alreadyMerged) return ok('Already up to date.\n');
      if (result.fastForward) return ok(`Fast-forward to ${theirs} (${(result.oid ?? '').slice(0, 7)})\n`);
      return ok(`Merge made by the 'ort' strategy. (${(result.oid ?? '').slice(0, 7)})\n`);
    },

    diff: async (args) => {
      const cached = args.includes('--cached') || args.includes('--staged');
      const nameOnly = args.includes('--name-only') || args.includes('--name-status');
      const rows = (await this.matrix()).filter((r) => {
        const code = statusCode(r);
        return code !== '' && code !== '??' && (cached ? code[0] !== ' ' : code[1] !== ' ');
      });
      if (nameOnly) return ok(rows.map(([f]) => f).join('\n') + (rows.length ? '\n' : ''));
      const head = (await this.hasCommits()) ? await git.resolveRef({ fs: this.fs, dir: DIR, ref: 'HEAD' }) : null;
      const out: string[] = [];
      for (const [file] of rows) {
        let before = '';
        if (head) {
          try {
            const { blob } = await git.readBlob({ ...this.base, oid: head, filepath: file });
            before = new TextDecoder().decode(blob);
          } catch {
            before = '';
          }
        }
        const after = this.fs.isFile('/' + file) ? this.fs.readFile('/' + file) : '';
        out.push(`diff --git a/${file} b/${file}`, `--- a/${file}`, `+++ b/${file}`, ...lineDiff(before, after));
      }
      return ok(out.length ? out.join('\n') + '\n' : '');
    },

    reset: async (args, cwd) => {
      const paths = args.filter((a) => !a.startsWith('-') && a !== 'HEAD');
      if (paths.length === 0) return fail('only `git reset <file>` (unstage) is supported');
      for (const p of paths) await git.resetIndex({ ...this.base, filepath: this.repoPath(p, cwd) });
      return ok();
    },

    restore: async (args, cwd) => {
      const staged = args.includes('--staged');
      const paths = args.filter((a) => !a.startsWith('-'));
      if (paths.length === 0) return fail('usage: git restore [--staged] <file>');
      for (const p of paths) {
        const filepath = this.repoPath(p, cwd);
        if (staged) await git.resetIndex({ ...this.base, filepath });
        else await git.checkout({ ...this.base, filepaths: [filepath], force: true });
      }
      return ok();
    },

    tag: async (args) => {
      const names = args.filter((a) => !a.startsWith('-'));
      if (names.length === 0) {
        const tags = await git.listTags({ fs: this.fs, dir: DIR });
        return ok(tags.map((t) => t + '\n').join(''));
      }
      await git.tag({ fs: this.fs, dir: DIR, ref: names[0] });
      return ok();
    },

    'rev-parse': async (args) => {
      if (args.includes('--abbrev-ref')) return ok(((await this.currentBranch()) ?? 'HEAD') + '\n');
      const ref = args.find((a) => !a.startsWith('-')) ?? 'HEAD';
      return ok((await git.resolveRef({ fs: this.fs, dir: DIR, ref })) + '\n');
    },
  };

  private async checkout(args: string[], cwd: string, createFlag: '-b' | '-c'): Promise<ShOutput> {
    const create = args.includes(createFlag) || args.includes('-B') || args.includes('-C');
    const dashDash = args.indexOf('--');
    const operands = (dashDash === -1 ? args : args.slice(0, dashDash)).filter((a) => !a.startsWith('-'));
    const files = dashDash === -1 ? [] : args.slice(dashDash + 1);
    if (files.length > 0) {
      await git.checkout({ ...this.base, filepaths: files.map((f) => this.repoPath(f, cwd)), force: true });
      return ok();
    }
    const target = operands[0];
    if (!target) return fail(`usage: git checkout [${createFlag}] <branch>`);
    const branches = await this.branches();
    if (create) {
      if (!(await this.hasCommits())) {
        // Like git on an unborn branch: just point HEAD at the new name.
        await this.fs.promises.writeFile('/.git/HEAD', `ref: refs/heads/${target}\n`);
        return ok(`Switched to a new branch '${target}'\n`);
      }
      await git.branch({ fs: this.fs, dir: DIR, ref: target, checkout: true });
      return ok(`Switched to a new branch '${target}'\n`);
    }
    if (!branches.includes(target)) {
      // `git checkout <file>`: restore the file from the index.
      const rel = this.repoPath(target, cwd);
      const tracked = (await this.matrix()).some(([f, h, , s]) => f === rel && (h !== 0 || s !== 0));
      if (tracked) {
        await git.checkout({ ...this.base, filepaths: [rel], force: true });
        return ok(`Updated 1 path from the index\n`);
      }
      return fail(
        `error: pathspec '${target}' did not match any branch or file known to git (branches: ${branches.join(', ') || 'none'})`,
      );
    }
    await git.checkout({ ...this.base, ref: target });
    return ok(`Switched to branch '${target}'\n`);
  }
}
