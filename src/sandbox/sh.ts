/**
 * The `sh` tool: shell-like commands over the episode's VirtualFs (shell tasks without a
 * real shell). Commands: pwd cd ls cat echo printf mkdir rm mv cp touch wc grep head tail find sort uniq,
 * plus `git …` routed to the git tool when the episode has one. Pipes, `> >> <`, `&& || ;`, globs.
 *
 * Contained: everything happens on the in-memory file system; there is no process, environment,
 * network or real disk. Work on the host thread is bounded: `grep` matches with RE2 (linear in the
 * input, no backtracking, so no pattern can hang it), globs are matched without regular expressions,
 * path length and depth are capped by the file system, and the commands that walk many lines or files
 * stop at `state.deadline`. The worker running the toolbox stays the last backstop.
 */
import { RE2JS } from 're2js';
import { parseCommandLine, globMatcher, ShellSyntaxError, type SimpleCommand, type Word } from './sh-parse.ts';
import { FsError, resolvePath, type VirtualFs } from './vfs.ts';

export interface ShOutput {
  stdout: string;
  stderr: string;
  code: number;
}

/** Runs `git` with argv (without the leading "git"); absent when the episode has no git tool. */
export type GitRunner = (argv: string[]) => Promise<ShOutput>;

export interface ShellState {
  fs: VirtualFs;
  cwd: string;
  git: GitRunner | null;
  /** Epoch ms after which long-running commands stop with a timeout error; none when absent. */
  deadline?: number;
}

type Io = { stdin: string; state: ShellState };
type Builtin = (args: string[], io: Io) => ShOutput | Promise<ShOutput>;

const ok = (stdout = ''): ShOutput => ({ stdout, stderr: '', code: 0 });
const fail = (stderr: string, code = 1): ShOutput => ({
  stdout: '',
  stderr: stderr.endsWith('\n') ? stderr : stderr + '\n',
  code,
});
const MAX_GREP_LINE = 10_000;

const pastDeadline = (state: ShellState): boolean => state.deadline !== undefined && Date.now() > state.deadline;
const timedOut = (cmd: string, done: string): ShOutput =>
  fail(`timeout: ${cmd} stopped after ${done} (the tool call's deadline passed)`, 124);

/** Split leading `-abc` flags from operands; `--` ends flags. Numeric flags like `-5` are kept as flags. */
function splitFlags(args: string[]): { flags: Set<string>; rest: string[] } {
  const flags = new Set<string>();
  const rest: string[] = [];
  let done = false;
  for (const a of args) {
    if (!done && a === '--') done = true;
    else if (!done && a.startsWith('-') && a.length > 1) for (const f of a.slice(1)) flags.add(f);
    else rest.push(a);
  }
  return { flags, rest };
}

function lines(text: string): string[] {
  if (text === '') return [];
  const out = text.split('\n');
  if (out[out.length - 1] === '') out.pop();
  return out;
}

const joinLines = (ls: string[]): string => (ls.length ? ls.join('\n') + '\n' : '');

/** A path for a message: a path of thousands of characters would push the reason out of the capped result. */
function shorten(path: string): string {
  return path.length > 80 ? `${path.slice(0, 60)}…(${path.length} characters)` : path;
}

/** `cat: notes.txt: No such file or directory`, naming the path as the user wrote it when known. */
function fsMessage(cmd: string, e: unknown, shownPath?: string): string {
  if (e instanceof FsError) {
    const what = {
      ENOENT: 'No such file or directory',
      EEXIST: 'File exists',
      ENOTDIR: 'Not a directory',
      ENOTEMPTY: 'Directory not empty',
      EISDIR: 'Is a directory',
      EINVAL: 'Invalid argument',
      ENOSPC: 'No space left on device',
      ENAMETOOLONG: 'File name too long',
    }[e.code];
    return `${cmd}: ${shorten(shownPath ?? e.path)}: ${what}`;
  }
  return `${cmd}: ${e instanceof Error ? e.message : String(e)}`;
}

/** Read each operand (or stdin when none); errors for missing files go to stderr. */
function readInputs(cmd: string, files: string[], io: Io): { texts: { name: string; text: string }[]; stderr: string } {
  if (files.length === 0) return { texts: [{ name: '', text: io.stdin }], stderr: '' };
  const texts: { name: string; text: string }[] = [];
  let stderr = '';
  for (const f of files) {
    try {
      texts.push({ name: f, text: io.state.fs.readFile(resolvePath(f, io.state.cwd)) });
    } catch (e) {
      stderr += fsMessage(cmd, e, f) + '\n';
    }
  }
  return { texts, stderr };
}

function numberFlag(args: string[], fallback: number): { n: number; rest: string[] } {
  const rest: string[] = [];
  let n = fallback;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '-n' && i + 1 < args.length) n = Number(args[++i]);
    else if (/^-n\d+$/.test(a)) n = Number(a.slice(2));
    else if (/^-\d+$/.test(a)) n = Number(a.slice(1));
    else rest.push(a);
  }
  return { n: Number.isFinite(n) && n >= 0 ? n : fallback, rest };
}

/** RE2 syntax (what `grep -E` users write, minus backreferences and lookaround), matched in linear time. */
function grepPattern(pattern: string, flags: Set<string>): RE2JS {
  const source = flags.has('F') ? RE2JS.quote(pattern) : pattern;
  try {
    return RE2JS.compile(source, flags.has('i') ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new Error(
      `invalid pattern '${pattern}': ${why} (backreferences and lookaround are not supported; use -F for a literal string)`,
      { cause: e },
    );
  }
}

const builtins: Record<string, Builtin> = {
  pwd: (_a, io) => ok(io.state.cwd + '\n'),

  cd: (args, io) => {
    const target = resolvePath(args[0] ?? '/', io.state.cwd);
    if (!io.state.fs.exists(target)) return fail(`cd: ${args[0]}: No such file or directory`);
    if (!io.state.fs.isDir(target)) return fail(`cd: ${args[0]}: Not a directory`);
    io.state.cwd = target;
    return ok();
  },

  ls: (args, io) => {
    const { flags, rest } = splitFlags(args);
    const fs = io.state.fs;
    const targets = rest.length ? rest : ['.'];
    const out: string[] = [];
    let stderr = '';
    const show = (name: string) => flags.has('a') || !name.startsWith('.');
    const entry = (path: string, name: string) => {
      if (!flags.has('l')) return name;
      const st = fs.stat(path);
      return `${st.isDirectory() ? 'd' : '-'} ${String(st.size).padStart(6)} ${name}`;
    };
    for (const t of targets) {
      const p = resolvePath(t, io.state.cwd);
      if (!fs.exists(p)) {
        stderr += `ls: cannot access '${t}': No such file or directory\n`;
        continue;
      }
      if (!fs.isDir(p)) {
        out.push(entry(p, t));
        continue;
      }
      if (targets.length > 1) out.push(`${t}:`);
      for (const name of fs.list(p)) if (show(name)) out.push(entry(p === '/' ? `/${name}` : `${p}/${name}`, name));
    }
    return { stdout: joinLines(out), stderr, code: stderr ? 2 : 0 };
  },

  cat: (args, io) => {
    const { texts, stderr } = readInputs(
      'cat',
      args.filter((a) => a !== '-'),
      io,
    );
    return { stdout: texts.map((t) => t.text).join(''), stderr, code: stderr ? 1 : 0 };
  },

  echo: (args) => {
    let newline = true;
    let escapes = false;
    while (args[0] === '-n' || args[0] === '-e' || args[0] === '-ne' || args[0] === '-en') {
      const f = args.shift() as string;
      if (f.includes('n')) newline = false;
      if (f.includes('e')) escapes = true;
    }
    let text = args.join(' ');
    if (escapes) text = text.replace(/\\n/g, '\n').replace(/\\t/g, '\t');
    return ok(newline ? text + '\n' : text);
  },

  printf: (args) => {
    if (args.length === 0) return fail('printf: usage: printf format [arguments]');
    const [format, ...values] = args;
    let i = 0;
    const text = format
      .replace(/%([sd%])/g, (_m, k: string) =>
        k === '%' ? '%' : k === 'd' ? String(parseInt(values[i++] ?? '0', 10) || 0) : (values[i++] ?? ''),
      )
      .replace(/\\n/g, '\n')
      .replace(/\\t/g, '\t');
    return ok(text);
  },

  mkdir: (args, io) => {
    const { flags, rest } = splitFlags(args);
    if (rest.length === 0) return fail('mkdir: missing operand');
    let stderr = '';
    for (const d of rest) {
      const p = resolvePath(d, io.state.cwd);
      try {
        if (flags.has('p')) io.state.fs.mkdirp(p);
        else io.state.fs.mkdir(p);
      } catch (e) {
        stderr += `mkdir: cannot create directory '${shorten(d)}': ${fsMessage('', e).split(': ').pop()}\n`;
      }
    }
    return { stdout: '', stderr, code: stderr ? 1 : 0 };
  },

  rm: (args, io) => {
    const { flags, rest } = splitFlags(args);
    const recursive = flags.has('r') || flags.has('R');
    if (rest.length === 0) return flags.has('f') ? ok() : fail('rm: missing operand');
    let stderr = '';
    for (const f of rest) {
      const p = resolvePath(f, io.state.cwd);
      if (!io.state.fs.exists(p)) {
        if (!flags.has('f')) stderr += `rm: cannot remove '${f}': No such file or directory\n`;
      } else if (io.state.fs.isDir(p) && !recursive) {
        stderr += `rm: cannot remove '${f}': Is a directory\n`;
      } else if (p === '/') {
        stderr += `rm: refusing to remove '/'\n`;
      } else {
        io.state.fs.remove(p, { recursive: true });
      }
    }
    return { stdout: '', stderr, code: stderr ? 1 : 0 };
  },

  rmdir: (args, io) => {
    let stderr = '';
    for (const d of args) {
      try {
        if (!io.state.fs.isDir(resolvePath(d, io.state.cwd))) throw new FsError('ENOTDIR', d, 'not a directory');
        io.state.fs.remove(resolvePath(d, io.state.cwd));
      } catch (e) {
        stderr += fsMessage('rmdir', e) + '\n';
      }
    }
    return { stdout: '', stderr, code: stderr ? 1 : 0 };
  },

  mv: (args, io) => moveOrCopy('mv', args, io),
  cp: (args, io) => moveOrCopy('cp', args, io),

  touch: (args, io) => {
    if (args.length === 0) return fail('touch: missing file operand');
    let stderr = '';
    for (const f of args) {
      const p = resolvePath(f, io.state.cwd);
      try {
        if (io.state.fs.isDir(p)) continue;
        io.state.fs.writeFile(p, io.state.fs.exists(p) ? io.state.fs.readBytes(p) : '');
      } catch (e) {
        stderr += fsMessage('touch', e) + '\n';
      }
    }
    return { stdout: '', stderr, code: stderr ? 1 : 0 };
  },

  wc: (args, io) => {
    const { flags, rest } = splitFlags(args);
    const { texts, stderr } = readInputs('wc', rest, io);
    const pick = flags.size ? flags : new Set(['l', 'w', 'c']);
    const out = texts.map(({ name, text }) => {
      const counts: number[] = [];
      if (pick.has('l')) counts.push((text.match(/\n/g) ?? []).length);
      if (pick.has('w')) counts.push(text.split(/\s+/).filter(Boolean).length);
      if (pick.has('c')) counts.push(new TextEncoder().encode(text).length);
      return [...counts.map(String), ...(name ? [name] : [])].join(' ');
    });
    return { stdout: joinLines(out), stderr, code: stderr ? 1 : 0 };
  },

  grep: (args, io) => {
    const { flags, rest } = splitFlags(args);
    if (rest.length === 0) return fail('grep: usage: grep [-invclrFE] PATTERN [FILE...]', 2);
    const [pattern, ...files] = rest;
    let re: RE2JS;
    try {
      re = grepPattern(pattern, flags);
    } catch (e) {
      return fail(`grep: ${e instanceof Error ? e.message : String(e)}`, 2);
    }
    let targets = files;
    if (flags.has('r') || flags.has('R')) {
      targets = (files.length ? files : ['.']).flatMap((f) =>
        io.state.fs.walk(resolvePath(f, io.state.cwd), { skipGit: true }).map((p) => relativeTo(p, io.state.cwd)),
      );
    }
    const { texts, stderr } = readInputs('grep', targets, io);
    const showName = targets.length > 1 || flags.has('r') || flags.has('R');
    const out: string[] = [];
    let matched = 0;
    let scanned = 0;
    for (const { name, text } of texts) {
      let count = 0;
      const all = lines(text);
      for (let i = 0; i < all.length; i++) {
        if (pastDeadline(io.state)) return timedOut('grep', `${scanned} lines`);
        scanned++;
        const line = all[i];
        const hit = re.test(line.length > MAX_GREP_LINE ? line.slice(0, MAX_GREP_LINE) : line) !== flags.has('v');
        if (!hit) continue;
        count++;
        if (flags.has('c') || flags.has('l')) continue;
        out.push(`${showName ? name + ':' : ''}${flags.has('n') ? `${i + 1}:` : ''}${line}`);
      }
      if (flags.has('c')) out.push(`${showName ? name + ':' : ''}${count}`);
      if (flags.has('l') && count > 0) out.push(name || '(standard input)');
      matched += count;
    }
    return { stdout: joinLines(out), stderr, code: stderr ? 2 : matched > 0 ? 0 : 1 };
  },

  head: (args, io) => headTail('head', args, io),
  tail: (args, io) => headTail('tail', args, io),

  find: (args, io) => {
    const roots: string[] = [];
    let name: ((leaf: string) => boolean) | null = null;
    let type: string | null = null;
    for (let i = 0; i < args.length; i++) {
      if (args[i] === '-name' || args[i] === '-iname') {
        const pattern = args[++i];
        if (pattern === undefined) return fail(`find: missing argument to '${args[i - 1]}'`);
        name = globMatcher(pattern, { ignoreCase: args[i - 1] === '-iname' });
      } else if (args[i] === '-type') {
        type = args[++i] ?? null;
        if (type !== 'f' && type !== 'd') return fail(`find: unknown argument to -type: ${type}`);
      } else if (args[i].startsWith('-')) {
        return fail(`find: unknown predicate '${args[i]}' (supported: -name, -iname, -type f|d)`);
      } else roots.push(args[i]);
    }
    const fs = io.state.fs;
    const out: string[] = [];
    let stderr = '';
    for (const root of roots.length ? roots : ['.']) {
      const base = resolvePath(root, io.state.cwd);
      if (!fs.exists(base)) {
        stderr += `find: '${root}': No such file or directory\n`;
        continue;
      }
      // Depth-first with an explicit stack (children pushed in reverse), so depth never meets the call stack.
      const stack: [string, string][] = [[base, root.replace(/(.)\/+$/, '$1')]];
      while (stack.length > 0) {
        if (pastDeadline(io.state)) return timedOut('find', `${out.length} results`);
        const [p, shown] = stack.pop()!;
        const isDir = fs.isDir(p);
        const leaf = p === '/' ? '/' : p.slice(p.lastIndexOf('/') + 1);
        if ((!type || (type === 'd') === isDir) && (!name || name(leaf))) out.push(shown);
        if (!isDir) continue;
        const children = fs.list(p).filter((c) => c !== '.git');
        for (let k = children.length - 1; k >= 0; k--) {
          const c = children[k];
          stack.push([p === '/' ? `/${c}` : `${p}/${c}`, shown === '/' ? `/${c}` : `${shown}/${c}`]);
        }
      }
    }
    return { stdout: joinLines(out), stderr, code: stderr ? 1 : 0 };
  },

  sort: (args, io) => {
    const { flags, rest } = splitFlags(args);
    const { texts, stderr } = readInputs('sort', rest, io);
    const all = texts.flatMap((t) => lines(t.text));
    all.sort(
      flags.has('n')
        ? (a, b) => parseFloat(a) - parseFloat(b) || (a < b ? -1 : a > b ? 1 : 0)
        : (a, b) => (a < b ? -1 : a > b ? 1 : 0),
    );
    if (flags.has('r')) all.reverse();
    return { stdout: joinLines(flags.has('u') ? [...new Set(all)] : all), stderr, code: stderr ? 2 : 0 };
  },

  uniq: (args, io) => {
    const { flags, rest } = splitFlags(args);
    const { texts, stderr } = readInputs('uniq', rest, io);
    const out: string[] = [];
    const counts: number[] = [];
    for (const line of texts.flatMap((t) => lines(t.text))) {
      if (out.length && out[out.length - 1] === line) counts[counts.length - 1]++;
      else {
        out.push(line);
        counts.push(1);
      }
    }
    return {
      stdout: joinLines(flags.has('c') ? out.map((l, i) => `${String(counts[i]).padStart(7)} ${l}`) : out),
      stderr,
      code: stderr ? 1 : 0,
    };
  },

  true: () => ok(),
  false: () => ({ stdout: '', stderr: '', code: 1 }),

  git: (args, io) =>
    io.state.git ? io.state.git(args) : fail('sh: git: command not found (this episode has no git tool)', 127),
};

function relativeTo(path: string, cwd: string): string {
  if (cwd === '/') return path.slice(1);
  return path.startsWith(cwd + '/') ? path.slice(cwd.length + 1) : path;
}

function headTail(cmd: 'head' | 'tail', args: string[], io: Io): ShOutput {
  const { n, rest } = numberFlag(args, 10);
  const { texts, stderr } = readInputs(cmd, rest, io);
  const out: string[] = [];
  for (const { name, text } of texts) {
    if (texts.length > 1) out.push(`==> ${name} <==`);
    const ls = lines(text);
    out.push(...(cmd === 'head' ? ls.slice(0, n) : n === 0 ? [] : ls.slice(-n)));
  }
  return { stdout: joinLines(out), stderr, code: stderr ? 1 : 0 };
}

function moveOrCopy(cmd: 'mv' | 'cp', args: string[], io: Io): ShOutput {
  const { flags, rest } = splitFlags(args);
  if (rest.length < 2) return fail(`${cmd}: missing destination file operand`);
  const fs = io.state.fs;
  const dest = resolvePath(rest[rest.length - 1], io.state.cwd);
  const sources = rest.slice(0, -1);
  if (sources.length > 1 && !fs.isDir(dest))
    return fail(`${cmd}: target '${rest[rest.length - 1]}' is not a directory`);
  let stderr = '';
  for (const s of sources) {
    const src = resolvePath(s, io.state.cwd);
    const target = fs.isDir(dest) ? `${dest === '/' ? '' : dest}/${src.slice(src.lastIndexOf('/') + 1)}` : dest;
    try {
      if (cmd === 'cp' && fs.isDir(src) && !(flags.has('r') || flags.has('R'))) {
        stderr += `cp: -r not specified; omitting directory '${s}'\n`;
        continue;
      }
      if (cmd === 'mv') fs.rename(src, target);
      else fs.copy(src, target);
    } catch (e) {
      stderr += fsMessage(cmd, e) + '\n';
    }
  }
  return { stdout: '', stderr, code: stderr ? 1 : 0 };
}

/** Expand unquoted globs against the file system; a pattern with no match stays as written (like bash). */
function expandWord(word: Word, state: ShellState): string[] {
  if (!word.glob) return [word.text];
  const slash = word.text.lastIndexOf('/');
  const dirPart = slash === -1 ? '' : word.text.slice(0, slash + 1);
  const dir = resolvePath(dirPart || '.', state.cwd);
  if (!state.fs.isDir(dir) || /[*?]/.test(dirPart)) return [word.text];
  const matches = globMatcher(word.text.slice(slash + 1));
  const names = state.fs.list(dir).filter((n) => matches(n) && !n.startsWith('.'));
  return names.length ? names.map((n) => dirPart + n) : [word.text];
}

async function runSimple(cmd: SimpleCommand, stdin: string, state: ShellState): Promise<ShOutput> {
  const argv = cmd.argv.flatMap((w) => expandWord(w, state));
  const [name, ...args] = argv;
  const builtin = Object.hasOwn(builtins, name) ? builtins[name] : undefined;
  if (!builtin) return fail(`sh: ${name}: command not found (available: ${Object.keys(builtins).join(' ')})`, 127);
  let input = stdin;
  if (cmd.input !== null) {
    try {
      input = state.fs.readFile(resolvePath(cmd.input, state.cwd));
    } catch (e) {
      return fail(fsMessage('sh', e));
    }
  }
  const result = await builtin(args, { stdin: input, state });
  if (cmd.output) {
    const path = resolvePath(cmd.output.path, state.cwd);
    try {
      if (cmd.output.append) state.fs.appendFile(path, result.stdout);
      else state.fs.writeFile(path, result.stdout);
    } catch (e) {
      return { stdout: '', stderr: result.stderr + fsMessage('sh', e) + '\n', code: 1 };
    }
    return { ...result, stdout: '' };
  }
  return result;
}

/** Run one command line; the shell state (cwd) persists in `state` across calls. */
export async function runShell(line: string, state: ShellState): Promise<ShOutput> {
  let list;
  try {
    list = parseCommandLine(line);
  } catch (e) {
    if (e instanceof ShellSyntaxError) return fail(`sh: syntax error: ${e.message}`, 2);
    throw e;
  }
  let stdout = '';
  let stderr = '';
  let code = 0;
  for (let i = 0; i < list.pipelines.length; i++) {
    const connector = i > 0 ? list.connectors[i - 1] : ';';
    if ((connector === '&&' && code !== 0) || (connector === '||' && code === 0)) continue;
    let input = '';
    for (const cmd of list.pipelines[i]) {
      if (pastDeadline(state))
        return {
          stdout,
          stderr: stderr + timedOut('sh', `${i} of its ${list.pipelines.length} pipelines`).stderr,
          code: 124,
        };
      const r = await runSimple(cmd, input, state);
      input = r.stdout;
      stderr += r.stderr;
      code = r.code;
    }
    stdout += input;
  }
  return { stdout, stderr, code };
}
