import { describe, expect, it } from 'vitest';
import { createToolbox } from '../../src/sandbox/index.ts';

async function shell(files: Record<string, string> = {}) {
  const tb = await createToolbox({ tools: ['sh'], files });
  return { tb, sh: (command: string) => tb.call('sh', { command }) };
}

describe('sh tool on the virtual file system', () => {
  it('echo with > and >>, cat, wc -l', async () => {
    const { sh } = await shell();
    expect(await sh('echo hello > notes.txt && echo world >> notes.txt')).toEqual({ result: '', error: null });
    expect((await sh('cat notes.txt')).result).toBe('hello\nworld');
    expect((await sh('wc -l notes.txt')).result).toBe('2 notes.txt');
    expect((await sh('cat notes.txt | wc -l')).result).toBe('2');
  });

  it('mkdir -p, cd, pwd, touch, ls (hidden files only with -a)', async () => {
    const { sh } = await shell();
    expect((await sh('mkdir -p a/b/c && cd a/b && pwd')).result).toBe('/a/b');
    expect((await sh('touch f.txt .hidden && ls')).result).toBe('c\nf.txt');
    expect((await sh('ls -a')).result).toBe('.hidden\nc\nf.txt');
    expect((await sh('cd .. && pwd')).result).toBe('/a'); // cwd persists across calls
    expect((await sh('mkdir a')).error).toBeNull();
    expect((await sh('mkdir b')).error).toMatch(/cannot create directory 'b': File exists/);
  });

  it('rm, rm -r, mv, cp, cp -r', async () => {
    const { sh, tb } = await shell({ 'src/a.js': 'A', 'src/b.js': 'B', 'x.txt': 'X' });
    expect((await sh('rm src')).error).toMatch(/Is a directory/);
    expect((await sh('mv x.txt y.txt && cp y.txt src/ && cp -r src lib')).error).toBeNull();
    expect(Object.keys(tb.snapshotFiles()).sort()).toEqual([
      'lib/a.js',
      'lib/b.js',
      'lib/y.txt',
      'src/a.js',
      'src/b.js',
      'src/y.txt',
      'y.txt',
    ]);
    expect((await sh('rm -r lib && rm y.txt && ls')).result).toBe('src');
    expect((await sh('rm nope')).error).toMatch(/cannot remove 'nope': No such file or directory/);
    expect((await sh('rm -f nope')).error).toBeNull();
  });

  it('grep (-n, -i, -v, -c, -r), head, tail, sort, uniq, find', async () => {
    const { sh } = await shell({
      'log.txt': 'b ok\na ERROR one\nc ok\na error two\n',
      'src/main.js': 'TODO fix\n',
      'src/util.js': 'done\n',
    });
    expect((await sh('grep -n -i error log.txt')).result).toBe('2:a ERROR one\n4:a error two');
    expect((await sh('grep -c ok log.txt')).result).toBe('2');
    expect((await sh('grep -v ok log.txt | head -n 1')).result).toBe('a ERROR one');
    expect((await sh('grep -r TODO .')).result).toBe('src/main.js:TODO fix');
    expect(await sh('grep missing log.txt')).toEqual({ result: '', error: 'exit status 1' });
    expect((await sh('tail -n 2 log.txt')).result).toBe('c ok\na error two');
    expect((await sh('cut -c1 log.txt')).error).toMatch(/cut: command not found/);
    expect((await sh('sort log.txt | head -2')).result).toBe('a ERROR one\na error two');
    expect((await sh('printf "x\\ny\\nx\\n" | sort | uniq -c')).result).toBe('      2 x\n      1 y');
    expect((await sh('find . -name "*.js"')).result).toBe('./src/main.js\n./src/util.js');
    expect((await sh('find src -type d')).result).toBe('src');
  });

  it('globs expand against the directory; quoted globs stay literal', async () => {
    const { sh } = await shell({ 'a.txt': '1\n', 'b.txt': '2\n', 'c.md': '3\n' });
    expect((await sh('cat *.txt')).result).toBe('1\n2');
    expect((await sh('echo "*.txt"')).result).toBe('*.txt');
    expect((await sh('rm *.txt && ls')).result).toBe('c.md');
  });

  it('&& stops after a failure, || runs on failure, ; always continues', async () => {
    const { sh } = await shell();
    expect(await sh('cat missing && echo never')).toEqual({
      result: '',
      error: 'cat: missing: No such file or directory',
    });
    expect((await sh('cat missing || echo fallback')).result).toMatch(/fallback/);
    expect((await sh('false ; echo after')).result).toBe('after');
  });

  it('syntax errors, unknown commands and git without a git tool are errors, not throws', async () => {
    const { sh } = await shell();
    expect((await sh('echo "unterminated')).error).toMatch(/syntax error: unterminated double quote/);
    expect((await sh('ls |')).error).toMatch(/syntax error/);
    expect((await sh('sleep 1 &')).error).toMatch(/background jobs/);
    expect((await sh('curl http://example.com')).error).toMatch(/curl: command not found/);
    expect((await sh('git status')).error).toMatch(/no git tool/);
    expect((await sh('$(rm -rf /)')).error).toMatch(/command not found/);
  });

  it('grep matches nested repetition without backtracking, and names what RE2 does not support', async () => {
    const { sh } = await shell({ 'a.txt': 'a'.repeat(40) + '!\n' + 'a'.repeat(40) + '\n' });
    expect((await sh('grep -c "^(a+)+$" a.txt')).result).toBe('1');
    expect((await sh('grep "(a)\\1" a.txt')).error).toMatch(
      /invalid pattern .*backreferences and lookaround are not supported/,
    );
  });

  it('find -name and globs match with * and ? (ignoring case with -iname)', async () => {
    const { sh } = await shell({ 'src/Main.JS': '', 'src/a.js': '', 'src/ab.txt': '' });
    expect((await sh('find src -iname "*.js"')).result).toBe('src/Main.JS\nsrc/a.js');
    expect((await sh('find src -name "a?.*"')).result).toBe('src/ab.txt');
    expect((await sh('cd src && ls *.t?t')).result).toBe('ab.txt');
  });
});
