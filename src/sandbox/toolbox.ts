/**
 * One episode's tools: `createToolbox` builds the whitelisted tools an environment asked for over a
 * fresh in-memory file system (shared by `sh` and `git`), and `call` runs one tool call the model made.
 * State (files, cwd, repository) persists across the calls of the episode; each `js` call still gets a
 * fresh QuickJS context, in the sandbox thread under its watchdog (js-thread.ts).
 *
 * Contained: the tools reach no network, page, DOM or storage (see quickjs.ts, sh.ts, git.ts); a call
 * never throws — an unknown tool, bad arguments, a tool failure or a timeout becomes `{ error }` text
 * the model can learn from; results are capped. Host-side tools (sh, git) run on the calling thread,
 * so they cannot be pre-empted; they are bounded by construction instead (no loops in the shell language,
 * linear-time grep, capped paths, in-memory git) and sh's long commands stop at the call's deadline.
 * The worker that owns the toolbox is the last backstop.
 */
import type { ToolSchema } from '../contracts.ts';
import { CalcError, evaluateArithmetic, formatNumber } from './calc.ts';
import { GitTool, statusCode } from './git.ts';
import { WALL_FACTOR } from './guest-clock.ts';
import { runJsIsolated } from './js-thread.ts';
import type { RunJsOptions } from './quickjs.ts';
import { parseCommandLine, ShellSyntaxError } from './sh-parse.ts';
import { runShell, type ShellState, type ShOutput } from './sh.ts';
import { isToolName, TOOL_NAMES, TOOL_SCHEMAS, type ToolName } from './tool-schemas.ts';
import { resolvePath, VirtualFs } from './vfs.ts';

export interface ToolResult {
  result: string;
  error: string | null;
}

export interface ToolboxOptions {
  /** Tool names from the whitelist (`calc`, `js`, `sh`, `git`). */
  tools: string[];
  /** Initial files, paths relative to `/` (a leading slash is allowed). */
  files?: Record<string, string>;
  /** Initialise a repository at `/`; when `files` are given they become the first commit ('initial commit'). */
  gitRepo?: boolean;
  /** Per-call timeout in ms (the js deadline, and the limit reported for the other tools). */
  timeoutMs?: number;
  /** Cap on each result and error text, in characters. */
  maxResultChars?: number;
  /** Limits for `js` calls other than the deadline. */
  js?: Pick<RunJsOptions, 'memoryBytes' | 'maxOutputBytes' | 'stackBytes'>;
}

export interface GitSnapshot {
  branch: string | null;
  branches: string[];
  /** Newest first. */
  log: { oid: string; message: string }[];
  /** Short-status code per changed path (`??`, `A `, ` M`, …); empty when clean. */
  status: Record<string, string>;
}

export interface Toolbox {
  readonly schemas: ToolSchema[];
  readonly fs: VirtualFs;
  call(name: string, args: Record<string, unknown>): Promise<ToolResult>;
  /** Text of every file, keyed by path relative to `/` (no leading slash); `.git` is left out. */
  snapshotFiles(): Record<string, string>;
  /** Repository state for evaluators; null when there is no repository. */
  snapshotGit(): Promise<GitSnapshot | null>;
  dispose(): void;
}

export const DEFAULT_TOOL_TIMEOUT_MS = 2000;
/**
 * The toolbox's own wall-clock limit on a call is a backstop for a call that never settles, not the
 * deadline: js stops at its deadline inside QuickJS (guest running time, guest-clock.ts) and sh at its
 * own. Wall time also counts every other task of this thread (a generation step between two awaits of
 * the call), so a limit near the deadline fails trivial calls on a busy thread.
 */
const HANG_BACKSTOP_MS = 30_000;
export const DEFAULT_MAX_RESULT_CHARS = 2000;

/** Text cut to `max` characters with a marker saying how much was cut (every tool result the model reads). */
export function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}\n...[truncated ${text.length - max} chars]` : text;
}

/** `calc expects {"expression": string}` — the schema in one line, for error messages. */
function expectedArgs(schema: ToolSchema): string {
  const props = Object.entries(schema.parameters.properties).map(([k, v]) => `"${k}": ${v.type}`);
  return `${schema.name} expects {${props.join(', ')}}`;
}

/** Check required string arguments; numbers are accepted and turned into strings. */
function validateArgs(
  schema: ToolSchema,
  args: Record<string, unknown>,
): { values: Record<string, string> } | { error: string } {
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    return { error: `arguments must be an object; ${expectedArgs(schema)}` };
  const values: Record<string, string> = {};
  for (const key of schema.parameters.required ?? []) {
    const v = args[key];
    if (v === undefined) {
      const given = Object.keys(args);
      return {
        error: `missing argument "${key}"; ${expectedArgs(schema)}${given.length ? `, got {${given.map((g) => `"${g}"`).join(', ')}}` : ''}`,
      };
    }
    if (typeof v !== 'string' && typeof v !== 'number')
      return { error: `argument "${key}" must be a string; ${expectedArgs(schema)}` };
    values[key] = String(v);
  }
  return { values };
}

function shellResult(r: ShOutput): ToolResult {
  const stdout = r.stdout.replace(/\s+$/, '');
  if (r.code === 0) return { result: (stdout + (r.stderr ? '\n' + r.stderr : '')).replace(/\s+$/, ''), error: null };
  return { result: stdout, error: r.stderr.trim() || `exit status ${r.code}` };
}

export async function createToolbox(opts: ToolboxOptions): Promise<Toolbox> {
  const unknown = opts.tools.filter((t) => !isToolName(t));
  if (unknown.length > 0) {
    throw new Error(
      `createToolbox: unknown tool(s) ${unknown.map((t) => `"${t}"`).join(', ')}; the whitelist is ${TOOL_NAMES.join(', ')}`,
    );
  }
  const enabled = new Set(opts.tools as ToolName[]);
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  const maxChars = opts.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS;
  const { fs, gitTool } = await prepareWorkspace(opts);
  const shell: ShellState = { fs, cwd: '/', git: enabled.has('git') ? (argv) => gitTool.run(argv, shell.cwd) : null };
  const handlers = toolHandlers(opts, timeoutMs, shell, gitTool);

  let disposed = false;

  const runOne = async (name: string, args: Record<string, unknown>): Promise<ToolResult> => {
    if (disposed) return { result: '', error: 'the toolbox of this episode was disposed' };
    if (!isToolName(name) || !enabled.has(name)) {
      const available = TOOL_NAMES.filter((t) => enabled.has(t))
        .map((t) => expectedArgs(TOOL_SCHEMAS[t]).replace(' expects ', ' '))
        .join(', ');
      return { result: '', error: `unknown tool "${name}"; available tools: ${available || 'none'}` };
    }
    const checked = validateArgs(TOOL_SCHEMAS[name], args);
    if ('error' in checked) return { result: '', error: `${name}: ${checked.error}` };
    return handlers[name](checked.values);
  };

  // Calls of one episode run one at a time, in order (its files and cwd depend on it); a call that
  // hangs past the backstop is given up on, and the next one runs.
  let queue: Promise<unknown> = Promise.resolve();
  const call = (name: string, args: Record<string, unknown>): Promise<ToolResult> => {
    const turn = queue.then(() => withHangBackstop(name, () => runOne(name, args), timeoutMs, maxChars));
    queue = turn; // never rejects, and settles by the backstop
    return turn;
  };

  return {
    schemas: TOOL_NAMES.filter((t) => enabled.has(t)).map((t) => TOOL_SCHEMAS[t]),
    fs,
    call,
    snapshotFiles: () => fs.snapshot('/'),
    snapshotGit: () => snapshotGit(gitTool),
    dispose: () => {
      disposed = true;
    },
  };
}

/** The episode's files in a fresh virtual file system; with `gitRepo`, a repository with them as its first commit. */
async function prepareWorkspace(opts: ToolboxOptions): Promise<{ fs: VirtualFs; gitTool: GitTool }> {
  const fs = new VirtualFs();
  for (const [path, content] of Object.entries(opts.files ?? {})) {
    const p = resolvePath(path);
    fs.mkdirp(p.slice(0, p.lastIndexOf('/')) || '/');
    fs.writeFile(p, content);
  }
  const gitTool = new GitTool(fs);
  if (opts.gitRepo) {
    await gitTool.init();
    if (Object.keys(opts.files ?? {}).length > 0) {
      await gitTool.addAll();
      await gitTool.commit('initial commit');
    }
  }
  return { fs, gitTool };
}

/** What each whitelisted tool does with its checked arguments. */
function toolHandlers(
  opts: ToolboxOptions,
  timeoutMs: number,
  shell: ShellState,
  gitTool: GitTool,
): Record<ToolName, (values: Record<string, string>) => Promise<ToolResult>> {
  return {
    calc: async ({ expression }) => {
      try {
        return { result: formatNumber(evaluateArithmetic(expression)), error: null };
      } catch (e) {
        if (e instanceof CalcError) return { result: '', error: `calc: ${e.message}` };
        throw e;
      }
    },
    js: async ({ code }) => {
      const r = await runJsIsolated(code, { ...opts.js, timeoutMs });
      const stdout = r.stdout.replace(/\s+$/, '');
      if (!r.ok) return { result: stdout, error: r.error };
      return {
        result: [stdout, r.value === 'undefined' ? '' : (r.value ?? '')].filter(Boolean).join('\n'),
        error: null,
      };
    },
    sh: async ({ command }) => {
      shell.deadline = Date.now() + timeoutMs;
      return shellResult(await runShell(command, shell));
    },
    git: async ({ command }) => {
      const argv = gitArgv(command);
      if ('error' in argv) return { result: '', error: argv.error };
      return shellResult(await gitTool.run(argv.argv, shell.cwd));
    },
  };
}

/** The git tool's command line as one command's words; pipes, redirections and lists belong to sh. */
function gitArgv(command: string): { argv: string[] } | { error: string } {
  try {
    const list = parseCommandLine(command);
    if (
      list.pipelines.length !== 1 ||
      list.pipelines[0].length !== 1 ||
      list.pipelines[0][0].output ||
      list.pipelines[0][0].input
    ) {
      return { error: 'git: give one git command (no pipes, redirections or &&); use the sh tool for those' };
    }
    return { argv: list.pipelines[0][0].argv.map((w) => w.text) };
  } catch (e) {
    if (e instanceof ShellSyntaxError) return { error: `git: ${e.message}` };
    throw e;
  }
}

/**
 * One call under the wall-clock hang backstop, its result and error cut to `maxChars`; a call that throws
 * becomes an error result (Toolbox.call never rejects).
 */
async function withHangBackstop(
  name: string,
  run: () => Promise<ToolResult>,
  timeoutMs: number,
  maxChars: number,
): Promise<ToolResult> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Never before the js guest's own wall-clock backstop (WALL_FACTOR × the deadline).
  const limitMs = Math.max(HANG_BACKSTOP_MS, 2 * WALL_FACTOR * timeoutMs);
  const limit = new Promise<ToolResult>((resolve) => {
    timer = setTimeout(
      () => resolve({ result: '', error: `timeout: ${name} did not finish within ${limitMs} ms of wall time` }),
      limitMs,
    );
  });
  try {
    const r = await Promise.race([run(), limit]);
    return { result: truncate(r.result, maxChars), error: r.error === null ? null : truncate(r.error, maxChars) };
  } catch (e) {
    return { result: '', error: `${name}: internal tool failure: ${e instanceof Error ? e.message : String(e)}` };
  } finally {
    clearTimeout(timer);
  }
}

/** The repository's branch, branches, log and each changed file's status code; null when there is no repository. */
async function snapshotGit(gitTool: GitTool): Promise<GitSnapshot | null> {
  if (!gitTool.isRepo()) return null;
  const status: Record<string, string> = {};
  for (const row of await gitTool.matrix()) {
    const code = statusCode(row);
    if (code) status[row[0]] = code;
  }
  return {
    branch: await gitTool.currentBranch(),
    branches: await gitTool.branches(),
    log: await gitTool.log(),
    status,
  };
}
