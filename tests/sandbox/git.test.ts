import { describe, expect, it } from 'vitest';
import { createToolbox } from '../../src/sandbox/index.ts';

async function repo(files: Record<string, string> = {}, gitRepo = true) {
  const tb = await createToolbox({ tools: ['sh', 'git'], files, gitRepo });
  return {
    tb,
    git: (command: string) => tb.call('git', { command }),
    sh: (command: string) => tb.call('sh', { command }),
  };
}

describe('git tool on the shared in-memory file system', () => {
  it('init → write file → add → commit → log shows the commit', async () => {
    const { git, sh, tb } = await repo({}, false);
    expect((await git('status')).error).toMatch(/not a git repository/);
    expect((await git('init')).result).toBe('Initialized empty Git repository in /.git/');
    await sh('echo "# Project" > README.md');
    expect((await git('status')).result).toBe('On branch main\n?? README.md');
    expect(await git('add README.md')).toEqual({ result: '', error: null });
    expect((await git('status')).result).toBe('On branch main\nA  README.md');
    const commit = await git('commit -m "Add readme"');
    expect(commit.error).toBeNull();
    expect(commit.result).toMatch(/^\[main [0-9a-f]{7}\] Add readme\n 1 file changed$/);
    expect((await git('log --oneline')).result).toMatch(/^[0-9a-f]{7} Add readme$/);
    expect((await git('status')).result).toBe('On branch main\nnothing to commit, working tree clean');
    expect(await tb.snapshotGit()).toMatchObject({
      branch: 'main',
      branches: ['main'],
      log: [{ message: 'Add readme' }],
      status: {},
    });
  });

  it('gitRepo with files starts from an initial commit; the same actions give the same commit ids', async () => {
    const oids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const { git, sh } = await repo({ 'a.txt': 'a\n' });
      await sh('echo b > b.txt');
      await git('add .');
      await git('commit -m second');
      oids.push((await git('rev-parse HEAD')).result);
      expect((await git('log --oneline')).result.split('\n').map((l) => l.slice(8))).toEqual([
        'second',
        'initial commit',
      ]);
    }
    expect(oids[0]).toMatch(/^[0-9a-f]{40}$/);
    expect(oids[1]).toBe(oids[0]);
  });

  it('log reads another branch, or the commits that changed one path', async () => {
    const { git, sh } = await repo({ 'a.txt': 'a\n', 'b.md': 'b\n' });
    await sh('echo x >> a.txt');
    await git('add a.txt');
    await git('commit -m "fix parser"');
    await git('checkout -b feature-x');
    await sh('echo y >> b.md');
    await git('add b.md');
    await git('commit -m "add docs"');
    await git('checkout main');
    const messages = async (command: string) => (await git(command)).result.split('\n').map((l) => l.slice(8));
    expect(await messages('log --oneline')).toEqual(['fix parser', 'initial commit']);
    expect(await messages('log --oneline feature-x')).toEqual(['add docs', 'fix parser', 'initial commit']);
    expect((await git('log -1 feature-x')).result).toMatch(/\n {4}add docs$/);
    expect(await messages('log --oneline -- b.md')).toEqual(['initial commit']);
    expect(await messages('log --oneline -n 1 a.txt')).toEqual(['fix parser']);
    expect(await messages('log --oneline feature-x -- b.md')).toEqual(['add docs', 'initial commit']);
    expect((await sh('git log -1 feature-x')).result).toMatch(/add docs$/);
    expect((await git('log nowhere')).error).toMatch(/unknown revision or path not in the working tree/);
  });

  it('branch, checkout -b, commit -am, checkout, merge (fast-forward)', async () => {
    const { git, sh, tb } = await repo({ 'app.js': 'v1\n' });
    expect((await git('checkout -b feature')).result).toBe("Switched to a new branch 'feature'");
    await sh('echo v2 > app.js');
    expect((await git('diff --name-only')).result).toBe('app.js');
    expect((await git('diff')).result).toContain('-v1\n+v2');
    expect((await git('commit -am "bump"')).error).toBeNull();
    expect((await git('branch')).result).toBe('* feature\n  main');
    expect((await git('checkout main')).error).toBeNull();
    expect(tb.snapshotFiles()['app.js']).toBe('v1\n'); // checkout rewrote the working tree
    expect((await git('merge feature')).result).toMatch(/Fast-forward/);
    expect(tb.snapshotFiles()['app.js']).toBe('v2\n');
    expect((await git('log --oneline -n 1')).result).toMatch(/bump$/);
  });

  it('rm, reset, checkout -- file, and status codes for deleted/modified/staged files', async () => {
    const { git, sh } = await repo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
    await sh('rm a.txt && echo changed > b.txt && echo new > d.txt');
    await git('add d.txt');
    expect((await git('status')).result).toBe('On branch main\n D a.txt\n M b.txt\nA  d.txt');
    expect((await git('rm c.txt')).result).toBe("rm 'c.txt'");
    await git('reset d.txt');
    await git('checkout -- b.txt');
    expect((await git('status')).result).toBe('On branch main\n D a.txt\nD  c.txt\n?? d.txt');
    expect((await sh('cat b.txt')).result).toBe('b');
  });

  it('refusals are errors the model can read: empty commit, missing message, unknown ref, unknown command', async () => {
    const { git } = await repo({ 'a.txt': 'a\n' });
    expect((await git('commit -m nothing')).error).toBe('nothing to commit, working tree clean');
    expect((await git('commit')).error).toMatch(/commit message is required: git commit -m "message"/);
    expect((await git('checkout nope')).error).toMatch(
      /pathspec 'nope' did not match any branch or file known to git \(branches: main\)/,
    );
    expect((await git('push origin main')).error).toMatch(/'push' is not a supported git command/);
    expect((await git('status | cat')).error).toMatch(/use the sh tool/);
  });

  it('git inside sh shares the working directory and the repository with the git tool', async () => {
    const { git, sh } = await repo({ 'docs/x.md': 'x\n' });
    expect((await sh('cd docs && echo y > y.md && git add y.md && git status')).result).toBe(
      'On branch main\nA  docs/y.md',
    );
    expect((await git('commit -m "docs: y"')).error).toBeNull();
    expect((await sh('git log --oneline | wc -l')).result).toBe('2');
  });
});
