/**
 * git_repo: tasks on an in-memory git repository, solved with the `git` and
 * `sh` tools: read the history (the last message on a named branch or of a named file, the commit count)
 * or change it (branch, commit, restore a file). A question is a success when a tool call that names the
 * question's branch or file found the answer and the final answer states it (state-check.ts); a change
 * when replaying the trajectory's tool calls on a fresh copy of the repository gives the right branches,
 * log, status and files. Questions ask about something a fixed probe (`git log -1`, `git status`) does not
 * show, so echoing one answers nothing; what a blind guess can still hit is drawn from catalogs large
 * enough to keep that luck small. Target of the transfer pair shell_exec → git_repo.
 */
import type { Task, Trajectory } from '../contracts.ts';
import { finalState } from './final-state.ts';
import {
  BRANCH_PREFIXES,
  COMMIT_OBJECTS,
  COMMIT_VERBS,
  CONTENT_WORDS,
  FILE_EXTS,
  FILE_STEMS,
  GIT_LEVELS,
  GIT_PROMPTS,
} from './data/shell.ts';
import { answerTurn, callTurn, type ExpertCall } from './expert-text.ts';
import type { Rng } from '../rng.ts';
import { filesMatch, scoreQuestion, type AnswerCheck, type FileExpectations } from './state-check.ts';
import { changedNothing } from './task-toolbox.ts';
import type { EnvironmentSpec, SetupCall, TaskItem, ToolboxSetup } from './types.ts';

const GIT_TOOLS = ['sh', 'git'] as const;

/** What the final repository must look like. */
export interface GitExpectation {
  branch?: string;
  hasBranch?: string;
  lastMessage?: string;
  /** The working tree has no uncommitted changes. */
  clean?: boolean;
  /** Paths that must still have uncommitted changes. */
  modified?: string[];
  files?: FileExpectations;
}

export interface GitTaskData {
  kind: string;
  files: Record<string, string>;
  setup: SetupCall[];
  answer?: AnswerCheck;
  expect?: GitExpectation;
  /** Expert turns: the calls of each turn. */
  turns: ExpertCall[][];
  reply: string;
  think: string;
  [key: string]: unknown;
}

const sh = (command: string): ExpertCall => ({ name: 'sh', arguments: { command } });
const git = (command: string): ExpertCall => ({ name: 'git', arguments: { command } });
const asSetup = (call: ExpertCall): SetupCall => ({ tool: call.name as 'sh' | 'git', args: call.arguments });

function startFiles(rng: Rng): Record<string, string> {
  const stems = rng.shuffle(FILE_STEMS).slice(0, rng.int(2, 3));
  return Object.fromEntries(stems.map((s) => [s + rng.pick(FILE_EXTS), `${rng.pick(CONTENT_WORDS)}\n`]));
}

/** Setup calls that add `n` commits, each changing one file; returns the calls and the messages in order. */
function extraCommits(rng: Rng, files: string[], n: number): { calls: SetupCall[]; messages: string[] } {
  const messages = distinct(rng, n, commitMessage);
  const calls = messages.flatMap((m) => {
    const f = rng.pick(files);
    return [sh(`echo ${rng.pick(CONTENT_WORDS)} >> ${f}`), git(`add ${f}`), git(`commit -m "${m}"`)].map(asSetup);
  });
  return { calls, messages };
}

/** Names and messages are composed (prefix-word, verb object) so no short catalog makes a guess lucky. */
const branchName = (rng: Rng): string => `${rng.pick(BRANCH_PREFIXES)}-${rng.pick(CONTENT_WORDS)}`;
const commitMessage = (rng: Rng): string => `${rng.pick(COMMIT_VERBS)} ${rng.pick(COMMIT_OBJECTS)}`;
const BRANCH_SPACE = BRANCH_PREFIXES.length * CONTENT_WORDS.length;
const MESSAGE_SPACE = COMMIT_VERBS.length * COMMIT_OBJECTS.length;

function distinct(rng: Rng, n: number, draw: (rng: Rng) => string): string[] {
  const out = new Set<string>();
  while (out.size < n) out.add(draw(rng));
  return [...out];
}

function newFileName(rng: Rng, taken: string[]): string {
  const free = FILE_STEMS.filter((s) => !taken.some((t) => t.startsWith(`${s}.`)));
  return `${rng.pick(free)}${rng.pick(FILE_EXTS)}`;
}

const BUILDERS: Record<string, (rng: Rng) => { vars: Record<string, string>; data: GitTaskData }> = {
  branch_message(rng) {
    // main gets a commit of its own, so the checked-out history's last message is never the answer.
    const files = startFiles(rng);
    const names = Object.keys(files);
    const branch = branchName(rng);
    const [onMain, onBranch] = distinct(rng, 2, commitMessage);
    const commit = (file: string, message: string) => [
      sh(`echo ${rng.pick(CONTENT_WORDS)} >> ${file}`),
      git(`add ${file}`),
      git(`commit -m "${message}"`),
    ];
    const setup = [
      ...commit(rng.pick(names), onMain),
      git(`checkout -b ${branch}`),
      ...commit(rng.pick(names), onBranch),
      git('checkout main'),
    ].map(asSetup);
    return {
      vars: { branch },
      data: {
        kind: 'branch_message',
        files,
        setup,
        answer: { type: 'text', value: onBranch, target: branch },
        turns: [[git(`log -1 ${branch}`)]],
        reply: onBranch,
        think: `Read the log of ${branch}.`,
      },
    };
  },
  file_message(rng) {
    // The file's last change is never the newest commit: the newest touches another file.
    const files = startFiles(rng);
    const [file, other] = rng.shuffle(Object.keys(files));
    const messages = distinct(rng, 3, commitMessage);
    const commit = (f: string, message: string) => [
      sh(`echo ${rng.pick(CONTENT_WORDS)} >> ${f}`),
      git(`add ${f}`),
      git(`commit -m "${message}"`),
    ];
    const order = rng.chance(0.5) ? [other, file, other] : [file, file, other];
    const setup = order.flatMap((f, i) => commit(f, messages[i])).map(asSetup);
    const last = messages[order.lastIndexOf(file)];
    return {
      vars: { file },
      data: {
        kind: 'file_message',
        files,
        setup,
        answer: { type: 'text', value: last, target: file },
        turns: [[git(`log -1 -- ${file}`)]],
        reply: last,
        think: `Read the log of ${file}.`,
      },
    };
  },
  create_branch(rng) {
    const files = startFiles(rng);
    const branch = branchName(rng);
    return {
      vars: { branch },
      data: {
        kind: 'create_branch',
        files,
        setup: [],
        expect: { hasBranch: branch },
        turns: [[git(`branch ${branch}`)]],
        reply: 'Done.',
        think: 'Use git branch.',
      },
    };
  },
  commit_file(rng) {
    const files = startFiles(rng);
    const file = newFileName(rng, Object.keys(files));
    const message = commitMessage(rng);
    const setup = [asSetup(sh(`echo ${rng.pick(CONTENT_WORDS)} > ${file}`))];
    return {
      vars: { file, message },
      data: {
        kind: 'commit_file',
        files,
        setup,
        expect: { lastMessage: message, clean: true },
        turns: [[git(`add ${file}`), git(`commit -m "${message}"`)]],
        reply: 'Done.',
        think: 'Stage it, then commit.',
      },
    };
  },
  count_commits(rng) {
    const files = startFiles(rng);
    const n = rng.int(1, 8);
    const { calls } = extraCommits(rng, Object.keys(files), n);
    return {
      vars: {},
      data: {
        kind: 'count_commits',
        files,
        setup: calls,
        answer: { type: 'int', value: n + 1 },
        turns: [[git('log --oneline')]],
        reply: String(n + 1),
        think: 'Count log lines.',
      },
    };
  },
  switch_new_branch(rng) {
    const files = startFiles(rng);
    const branch = branchName(rng);
    return {
      vars: { branch },
      data: {
        kind: 'switch_new_branch',
        files,
        setup: [],
        expect: { branch },
        turns: [[git(`checkout -b ${branch}`)]],
        reply: 'Done.',
        think: 'Use checkout -b.',
      },
    };
  },
  write_commit(rng) {
    const files = startFiles(rng);
    const file = newFileName(rng, Object.keys(files));
    const word = rng.pick(CONTENT_WORDS);
    const message = commitMessage(rng);
    return {
      vars: { file, word, message },
      data: {
        kind: 'write_commit',
        files,
        setup: [],
        expect: { lastMessage: message, clean: true, files: { [file]: word } },
        turns: [[sh(`echo ${word} > ${file}`), git(`add ${file}`), git(`commit -m "${message}"`)]],
        reply: 'Done.',
        think: 'Write, stage, commit.',
      },
    };
  },
  restore_file(rng) {
    // Two files have uncommitted changes; only the named one is to be undone.
    const files = startFiles(rng);
    const [file, other] = rng.shuffle(Object.keys(files));
    const setup = [
      sh(`echo ${rng.pick(CONTENT_WORDS)} >> ${file}`),
      sh(`echo ${rng.pick(CONTENT_WORDS)} >> ${other}`),
    ].map(asSetup);
    return {
      vars: { file },
      data: {
        kind: 'restore_file',
        files,
        setup,
        expect: { files: { [file]: files[file] }, modified: [other] },
        turns: [[git(`checkout -- ${file}`)]],
        reply: 'Done.',
        think: 'Check out the committed version.',
      },
    };
  },
  branch_commit(rng) {
    const files = startFiles(rng);
    const branch = branchName(rng);
    const file = newFileName(rng, Object.keys(files));
    const word = rng.pick(CONTENT_WORDS);
    const message = commitMessage(rng);
    return {
      vars: { branch, file, word, message },
      data: {
        kind: 'branch_commit',
        files,
        setup: [],
        expect: { branch, lastMessage: message, clean: true, files: { [file]: word } },
        turns: [
          [
            git(`checkout -b ${branch}`),
            sh(`echo ${word} > ${file}`),
            git(`add ${file}`),
            git(`commit -m "${message}"`),
          ],
        ],
        reply: 'Done.',
        think: 'Branch, write, stage, commit.',
      },
    };
  },
  commit_all(rng) {
    const files = startFiles(rng);
    const changed = rng.pick(Object.keys(files));
    const added = newFileName(rng, Object.keys(files));
    const message = commitMessage(rng);
    const setup = [
      sh(`echo ${rng.pick(CONTENT_WORDS)} >> ${changed}`),
      sh(`echo ${rng.pick(CONTENT_WORDS)} > ${added}`),
    ].map(asSetup);
    return {
      vars: { message },
      data: {
        kind: 'commit_all',
        files,
        setup,
        expect: { lastMessage: message, clean: true },
        turns: [[git('add .'), git(`commit -m "${message}"`)]],
        reply: 'Done.',
        think: 'Stage everything, then commit.',
      },
    };
  },
};

function fillPrompt(template: string, vars: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_m, k: string) => vars[k] ?? `{${k}}`);
}

function buildGitTask(rng: Rng, difficulty: number, kind?: string): TaskItem {
  const chosen = kind ?? rng.pick(GIT_LEVELS[difficulty]);
  const { vars, data } = BUILDERS[chosen](rng);
  // The split goes by what is asked, what must come out and the history it is read from (the commit
  // messages), not by the unrelated starting files: the same question about the same history is a twin.
  const history = data.setup.flatMap((c) =>
    c.tool === 'git' && String(c.args.command).startsWith('commit') ? [String(c.args.command)] : [],
  );
  const key = `${chosen}|${Object.values(vars).join('|')}|${JSON.stringify(data.answer?.value ?? data.expect ?? null)}|${history.join(';')}`;
  return { prompt: fillPrompt(GIT_PROMPTS[chosen], vars), data, key };
}

/**
 * The chance that a blind guess is right, per kind: the answer (or the name to create) is one of a
 * catalog, drawn uniformly. A guess at a name to create is also checked, so it is the same luck.
 */
const BLIND_LUCK: Record<string, number> = {
  branch_message: 1 / MESSAGE_SPACE,
  file_message: 1 / MESSAGE_SPACE,
  create_branch: 1 / BRANCH_SPACE,
  commit_file: 0,
  count_commits: 1 / 8,
  switch_new_branch: 1 / BRANCH_SPACE,
  write_commit: 0,
  restore_file: 0,
  branch_commit: 0,
  commit_all: 1 / MESSAGE_SPACE,
};

const setupOf = (data: GitTaskData): ToolboxSetup => ({ files: data.files, gitRepo: true, calls: data.setup });

async function scoreGitTask(data: GitTaskData, trajectory: Trajectory): Promise<number | null> {
  if (data.answer) return scoreQuestion(trajectory, data.answer, GIT_TOOLS);
  if (changedNothing(trajectory, GIT_TOOLS)) return 0;
  const expect = data.expect;
  if (!expect) return 1;
  const { repo, files } = await finalState(setupOf(data), GIT_TOOLS, trajectory);
  if (repo === null) return 0;
  if (expect.branch !== undefined && repo.branch !== expect.branch) return 0;
  if (expect.hasBranch !== undefined && !repo.branches.includes(expect.hasBranch)) return 0;
  if (expect.lastMessage !== undefined && repo.log[0]?.message.trim() !== expect.lastMessage) return 0;
  // The snapshot lists changed paths only, so a clean tree has an empty status.
  if (expect.clean && Object.keys(repo.status).length > 0) return 0;
  if (expect.modified && !expect.modified.every((path) => path in repo.status)) return 0;
  if (expect.files && !filesMatch(files, expect.files)) return 0;
  return 1;
}

export const gitRepo: EnvironmentSpec = {
  name: 'git_repo',
  description: 'Tasks on an in-memory git repository: read history, branch, commit.',
  tags: ['git', 'shell', 'tool-use'],
  requiredTools: [...GIT_TOOLS],
  systemStyle: 'compact',
  sample: (rng, difficulty) => buildGitTask(rng, difficulty),
  toolbox: (task: Task) => setupOf(task.data as GitTaskData),
  evaluate: (task, trajectory) => scoreGitTask(task.data as GitTaskData, trajectory),
  chance: (difficulty) =>
    GIT_LEVELS[difficulty].reduce((sum, kind) => sum + BLIND_LUCK[kind] / GIT_LEVELS[difficulty].length, 0),
  expert(task: Task): string[] {
    const data = task.data as GitTaskData;
    const turns = data.turns.map((calls, i) => callTurn(i === 0 ? data.think : null, calls));
    return [...turns, answerTurn(data.reply)];
  },
};
