/**
 * shell_exec: tasks on a small virtual file system, solved with the `sh` tool:
 * count lines, read and create files, find files, copy/move/delete, grep logs. Each task
 * either asks a question (a success needs an sh call that found the answer and a final answer stating it,
 * see state-check.ts) or asks for a change (checked by replaying the trajectory's tool calls on a fresh
 * copy of the file system and comparing files). Splits go by the question, not the distractor files.
 * Source of the transfer pair shell_exec → git_repo: both drive shell-like tools.
 */
import type { Task, Trajectory } from '../contracts.ts';
import {
  CONTENT_WORDS,
  DIR_NAMES,
  FILE_EXTS,
  FILE_STEMS,
  LOG_EVENTS,
  LOG_LEVELS,
  SHELL_LEVELS,
  SHELL_PROMPTS,
} from './data/shell.ts';
import { answerTurn, callTurn } from './expert-text.ts';
import type { Rng } from '../rng.ts';
import {
  filesMatch,
  linesMatch,
  scoreQuestion,
  type AnswerCheck,
  type FileExpectations,
  type LinesExpectation,
} from './state-check.ts';
import { changedNothing, replayTrajectory } from './task-toolbox.ts';
import type { EnvironmentSpec, TaskItem, ToolboxSetup } from './types.ts';

/** Everything a shell task stores: its starting files, what to check, and the expert's commands. */
export interface ShellTaskData {
  kind: string;
  files: Record<string, string>;
  answer?: AnswerCheck;
  expectFiles?: FileExpectations;
  expectLines?: LinesExpectation;
  /** Expert turns: each a list of shell commands run in one tool call each. */
  commands: string[][];
  /** The expert's final answer text. */
  reply: string;
  think: string;
  [key: string]: unknown;
}

interface Built {
  vars: Record<string, string>;
  data: ShellTaskData;
}

const fileName = (rng: Rng): string => rng.pick(FILE_STEMS) + rng.pick(FILE_EXTS);
const words = (rng: Rng, n: number): string[] => Array.from({ length: n }, () => rng.pick(CONTENT_WORDS));
const lines = (items: string[]): string => items.map((l) => `${l}\n`).join('');

/** Distinct file names. */
function fileNames(rng: Rng, n: number, ext?: string): string[] {
  const stems = rng.shuffle(FILE_STEMS).slice(0, n);
  return stems.map((s) => s + (ext ?? rng.pick(FILE_EXTS)));
}

/** A couple of unrelated files so the file system is not trivially just the answer. */
function distractors(rng: Rng, avoid: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of fileNames(rng, 3)) if (!avoid.includes(name)) out[name] = lines(words(rng, rng.int(1, 3)));
  return out;
}

/** Numbered log lines; at least one is an ERROR (grep exits 1 on no match, which would read as a failed call). */
function logLines(rng: Rng, n: number): string[] {
  const forced = rng.int(0, n - 1);
  return Array.from(
    { length: n },
    (_, i) =>
      `${String(i + 1).padStart(2, '0')} ${i === forced ? 'ERROR' : rng.pick(LOG_LEVELS)} ${rng.pick(LOG_EVENTS)}`,
  );
}

const BUILDERS: Record<string, (rng: Rng, difficulty: number) => Built> = {
  count_lines(rng, difficulty) {
    const deep = difficulty >= 4;
    const dir = rng.pick(DIR_NAMES);
    const file = deep ? `${dir}/${fileName(rng)}` : fileName(rng);
    const n = deep ? rng.int(10, 40) : rng.int(1, 12);
    const files = { ...distractors(rng, [file]), [file]: lines(words(rng, n)) };
    return {
      vars: { file },
      data: {
        kind: 'count_lines',
        files,
        answer: { type: 'int', value: n, target: file },
        commands: [[`wc -l ${file}`]],
        reply: String(n),
        think: 'Count lines with wc.',
      },
    };
  },
  read_file(rng) {
    const file = fileName(rng);
    const word = rng.pick(CONTENT_WORDS);
    const files = { ...distractors(rng, [file]), [file]: `${word}\n` };
    return {
      vars: { file },
      data: {
        kind: 'read_file',
        files,
        answer: { type: 'text', value: word, target: file, alone: true },
        commands: [[`cat ${file}`]],
        reply: word,
        think: 'Read it with cat.',
      },
    };
  },
  create_file(rng) {
    const file = fileName(rng);
    const word = rng.pick(CONTENT_WORDS);
    const files = distractors(rng, [file]);
    return {
      vars: { file, word },
      data: {
        kind: 'create_file',
        files,
        expectFiles: { [file]: word },
        commands: [[`echo ${word} > ${file}`]],
        reply: 'Done.',
        think: 'Write it with echo.',
      },
    };
  },
  count_files(rng) {
    const dir = rng.pick(DIR_NAMES);
    const n = rng.int(1, 6);
    const files: Record<string, string> = distractors(rng, []);
    for (const name of fileNames(rng, n)) files[`${dir}/${name}`] = lines(words(rng, 1));
    return {
      vars: { dir },
      data: {
        kind: 'count_files',
        files,
        answer: { type: 'int', value: n, target: dir },
        commands: [[`ls ${dir} | wc -l`]],
        reply: String(n),
        think: `List ${dir}.`,
      },
    };
  },
  grep_count(rng) {
    const file = `${rng.pick(['app', 'server', 'build', 'sync'])}.log`;
    const log = logLines(rng, rng.int(4, 12));
    const n = log.filter((l) => l.includes('ERROR')).length;
    const files = { ...distractors(rng, [file]), [file]: lines(log) };
    return {
      vars: { file },
      data: {
        kind: 'grep_count',
        files,
        answer: { type: 'int', value: n, target: file },
        commands: [[`grep -c ERROR ${file}`]],
        reply: String(n),
        think: 'Count matches with grep -c.',
      },
    };
  },
  make_dir_file(rng) {
    const path = `${rng.pick(DIR_NAMES)}/${fileName(rng)}`;
    const word = rng.pick(CONTENT_WORDS);
    const dir = path.split('/')[0];
    return {
      vars: { path, word },
      data: {
        kind: 'make_dir_file',
        files: distractors(rng, []),
        expectFiles: { [path]: word },
        commands: [[`mkdir -p ${dir} && echo ${word} > ${path}`]],
        reply: 'Done.',
        think: 'Make the directory, then the file.',
      },
    };
  },
  copy_file(rng) {
    const file = fileName(rng);
    const dir = rng.pick(DIR_NAMES);
    const content = lines(words(rng, rng.int(1, 4)));
    const path = `${dir}/${file}`;
    const files = { ...distractors(rng, [file]), [file]: content };
    return {
      vars: { file, path },
      data: {
        kind: 'copy_file',
        files,
        expectFiles: { [file]: content, [path]: content },
        commands: [[`mkdir -p ${dir} && cp ${file} ${path}`]],
        reply: 'Done.',
        think: `Create ${dir}, then cp.`,
      },
    };
  },
  move_file(rng) {
    const [file, target] = fileNames(rng, 2);
    const content = lines(words(rng, rng.int(1, 4)));
    const files = { ...distractors(rng, [file, target]), [file]: content };
    return {
      vars: { file, target },
      data: {
        kind: 'move_file',
        files,
        expectFiles: { [file]: null, [target]: content },
        commands: [[`mv ${file} ${target}`]],
        reply: 'Done.',
        think: 'Rename with mv.',
      },
    };
  },
  find_file(rng) {
    const name = `${rng.pick(['config', 'secret', 'key', 'main', 'index'])}${rng.pick(['.json', '.js', '.txt'])}`;
    const [a, b] = rng.shuffle(DIR_NAMES);
    const path = rng.chance(0.5) ? `${a}/${b}/${name}` : `${a}/${name}`;
    const files = { ...distractors(rng, []), [path]: '{}\n', [`${b}/${fileName(rng)}`]: lines(words(rng, 1)) };
    return {
      vars: { name },
      data: {
        kind: 'find_file',
        files,
        answer: { type: 'path', value: path, target: name },
        commands: [[`find . -name ${name}`]],
        reply: path,
        think: 'Search with find.',
      },
    };
  },
  which_contains(rng) {
    const dir = rng.pick(DIR_NAMES);
    const names = fileNames(rng, rng.int(3, 5), '.txt');
    const word = rng.pick(CONTENT_WORDS);
    const others = CONTENT_WORDS.filter((w) => w !== word);
    const target = rng.pick(names);
    const files: Record<string, string> = {};
    for (const name of names) {
      const body = Array.from({ length: 3 }, () => rng.pick(others));
      if (name === target) body[rng.int(0, 2)] = word;
      files[`${dir}/${name}`] = lines(body);
    }
    const path = `${dir}/${target}`;
    return {
      vars: { dir, word },
      data: {
        kind: 'which_contains',
        files,
        answer: { type: 'path', value: path, target: word },
        commands: [[`grep -l ${word} ${dir}/*`]],
        reply: path,
        think: `grep each file for ${word}.`,
      },
    };
  },
  append_line(rng) {
    const file = fileName(rng);
    const before = words(rng, rng.int(1, 4));
    const word = rng.pick(CONTENT_WORDS);
    const files = { ...distractors(rng, [file]), [file]: lines(before) };
    return {
      vars: { file, word },
      data: {
        kind: 'append_line',
        files,
        expectFiles: { [file]: lines([...before, word]) },
        commands: [[`echo ${word} >> ${file}`]],
        reply: 'Done.',
        think: 'Append with >>.',
      },
    };
  },
  delete_tmp(rng) {
    const dir = rng.pick(DIR_NAMES);
    const stems = rng.shuffle(FILE_STEMS);
    const tmp = stems.slice(0, rng.int(1, 3)).map((s) => `${s}.tmp`);
    const keep = stems.slice(3, 3 + rng.int(1, 3)).map((s) => `${s}.txt`);
    const files: Record<string, string> = {};
    const expectFiles: FileExpectations = {};
    for (const t of tmp) {
      files[`${dir}/${t}`] = 'tmp\n';
      expectFiles[`${dir}/${t}`] = null;
    }
    for (const k of keep) {
      files[`${dir}/${k}`] = lines(words(rng, 1));
      expectFiles[`${dir}/${k}`] = files[`${dir}/${k}`];
    }
    // A .tmp file in another directory must survive: a blind `rm */*.tmp` is not the task.
    const other = `${rng.pick(DIR_NAMES.filter((d) => d !== dir))}/${rng.pick(FILE_STEMS)}.tmp`;
    files[other] = 'keep\n';
    expectFiles[other] = 'keep\n';
    return {
      vars: { dir },
      data: {
        kind: 'delete_tmp',
        files,
        expectFiles,
        commands: [[`rm ${dir}/*.tmp`]],
        reply: 'Done.',
        think: 'Remove them with a glob.',
      },
    };
  },
  list_to_file(rng) {
    const dir = rng.pick(DIR_NAMES);
    const names = fileNames(rng, rng.int(2, 5));
    const files: Record<string, string> = {};
    for (const n of names) files[`${dir}/${n}`] = lines(words(rng, 1));
    // Another directory with other files, so listing the wrong one (or everything) is wrong.
    const other = rng.pick(DIR_NAMES.filter((d) => d !== dir));
    for (const n of fileNames(rng, 2).filter((n) => !names.includes(n))) files[`${other}/${n}`] = lines(words(rng, 1));
    return {
      vars: { dir },
      data: {
        kind: 'list_to_file',
        files,
        expectLines: { path: 'list.txt', lines: names },
        commands: [[`ls ${dir} > list.txt`]],
        reply: 'Done.',
        think: 'Redirect ls into list.txt.',
      },
    };
  },
  count_errors(rng) {
    const dir = 'logs';
    const names = rng.shuffle(['app.log', 'db.log', 'web.log', 'job.log']).slice(0, rng.int(2, 3));
    const files: Record<string, string> = {};
    let n = 0;
    for (const name of names) {
      const log = logLines(rng, rng.int(3, 8));
      n += log.filter((l) => l.includes('ERROR')).length;
      files[`${dir}/${name}`] = lines(log);
    }
    return {
      vars: { dir },
      data: {
        kind: 'count_errors',
        files,
        answer: { type: 'int', value: n, target: dir },
        commands: [[`cat ${dir}/*.log | grep -c ERROR`]],
        reply: String(n),
        think: 'Join the logs and count ERROR.',
      },
    };
  },
};

function fillPrompt(template: string, vars: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_m, k: string) => vars[k] ?? `{${k}}`);
}

/** Sample a kind of the level and build it; shared by tests that want a specific kind. */
function buildShellTask(rng: Rng, difficulty: number, kind?: string): TaskItem {
  const chosen = kind ?? rng.pick(SHELL_LEVELS[difficulty]);
  const { vars, data } = BUILDERS[chosen](rng, difficulty);
  return { prompt: fillPrompt(SHELL_PROMPTS[chosen], vars), data, key: questionKey(chosen, vars, data) };
}

/**
 * The question itself, not the files around it: the kind, what the prompt names, and what must come
 * out. Two tasks asking the same about the same file are twins whatever the distractor files hold.
 */
function questionKey(
  kind: string,
  vars: Record<string, string>,
  data: { answer?: AnswerCheck; expectFiles?: unknown; expectLines?: unknown; expect?: unknown },
): string {
  return `${kind}|${Object.values(vars).join('|')}|${JSON.stringify(data.answer?.value ?? data.expectFiles ?? data.expectLines ?? data.expect ?? null)}`;
}

/** Scores a file-system task: the answer and/or the replayed final state. */
async function scoreFsTask(
  data: ShellTaskData,
  setup: ToolboxSetup,
  tools: readonly string[],
  trajectory: Trajectory,
): Promise<number> {
  if (data.answer) return scoreQuestion(trajectory, data.answer, tools);
  if (changedNothing(trajectory, tools)) return 0;
  const toolbox = await replayTrajectory(setup, tools, trajectory);
  try {
    const snapshot = toolbox.snapshotFiles();
    if (data.expectFiles && !filesMatch(snapshot, data.expectFiles)) return 0;
    if (data.expectLines && !linesMatch(snapshot, data.expectLines)) return 0;
    return 1;
  } finally {
    toolbox.dispose();
  }
}

function shellExpert(data: ShellTaskData): string[] {
  const turns = data.commands.map((cmds, i) =>
    callTurn(
      i === 0 ? data.think : null,
      cmds.map((command) => ({ name: 'sh', arguments: { command } })),
    ),
  );
  return [...turns, answerTurn(data.reply)];
}

export const shellExec: EnvironmentSpec = {
  name: 'shell_exec',
  description: 'Tasks on a virtual file system with shell commands.',
  tags: ['shell', 'files', 'tool-use'],
  requiredTools: ['sh'],
  systemStyle: 'compact',
  sample: (rng, difficulty) => buildShellTask(rng, difficulty),
  toolbox: (task: Task): ToolboxSetup => ({ files: (task.data as ShellTaskData).files }),
  evaluate: (task, trajectory) =>
    scoreFsTask(task.data as ShellTaskData, { files: (task.data as ShellTaskData).files }, ['sh'], trajectory),
  expert: (task) => shellExpert(task.data as ShellTaskData),
};
