/** Catalog data for shell_exec and git_repo: file and directory names, file contents, prompt wording. */

export const FILE_STEMS = [
  'notes',
  'todo',
  'readme',
  'data',
  'list',
  'report',
  'log',
  'ideas',
  'words',
  'plan',
  'draft',
  'names',
  'items',
  'tasks',
  'summary',
];
export const FILE_EXTS = ['.txt', '.md', '.csv'];
export const DIR_NAMES = [
  'docs',
  'src',
  'data',
  'notes',
  'logs',
  'tmp',
  'work',
  'archive',
  'backup',
  'out',
  'lib',
  'files',
];
export const CONTENT_WORDS = [
  'apple',
  'river',
  'stone',
  'cloud',
  'tiger',
  'maple',
  'ocean',
  'pixel',
  'rocket',
  'garden',
  'silver',
  'window',
  'orange',
  'planet',
  'forest',
  'candle',
  'mirror',
  'pepper',
  'violin',
  'desert',
  'harbor',
  'meadow',
  'copper',
  'falcon',
  'lemon',
];
export const LOG_LEVELS = ['INFO', 'INFO', 'INFO', 'WARN', 'ERROR'];
export const LOG_EVENTS = [
  'started',
  'stopped',
  'saved file',
  'user login',
  'cache miss',
  'retry',
  'timeout',
  'connected',
  'disk full',
  'done',
];

export const SHELL_PROMPTS: Record<string, string> = {
  count_lines: 'How many lines are in {file}?',
  read_file: 'What word is written in {file}?',
  create_file: 'Create a file {file} containing {word}.',
  count_files: 'How many files are in {dir}?',
  grep_count: 'How many lines in {file} contain ERROR?',
  make_dir_file: 'Create {path} containing {word}.',
  copy_file: 'Copy {file} to {path}.',
  move_file: 'Rename {file} to {target}.',
  find_file: 'Find the file named {name}. Answer with its path.',
  which_contains: 'Which file in {dir} contains the word {word}? Answer with its path.',
  append_line: 'Add the line {word} to the end of {file}.',
  delete_tmp: 'Delete every .tmp file in {dir}.',
  list_to_file: 'Write the names of the files in {dir} to list.txt, one per line.',
  count_errors: 'How many ERROR lines are in the files in {dir}?',
};

/** Shell task kinds per difficulty level. */
export const SHELL_LEVELS: Record<number, string[]> = {
  1: ['count_lines', 'read_file', 'create_file'],
  2: ['count_files', 'grep_count', 'make_dir_file'],
  3: ['copy_file', 'move_file', 'find_file'],
  4: ['which_contains', 'append_line', 'count_lines'],
  5: ['delete_tmp', 'list_to_file', 'count_errors'],
};

/** Commit messages are a verb and an object ("fix parser"): 200 messages. */
export const COMMIT_VERBS = [
  'add',
  'fix',
  'update',
  'remove',
  'rename',
  'refactor',
  'document',
  'test',
  'clean up',
  'speed up',
];
export const COMMIT_OBJECTS = [
  'readme',
  'parser',
  'loader',
  'config',
  'tests',
  'license',
  'build',
  'docs',
  'logging',
  'cache',
  'router',
  'schema',
  'login',
  'search',
  'layout',
  'footer',
  'api',
  'cli',
  'styles',
  'version',
];
/** Branch names are a prefix and a content word ("feature-maple"): 250 names. */
export const BRANCH_PREFIXES = ['feature', 'fix', 'dev', 'docs', 'test', 'release', 'hotfix', 'spike', 'perf', 'chore'];

export const GIT_PROMPTS: Record<string, string> = {
  branch_message: 'What is the message of the last commit on branch {branch}?',
  file_message: 'What is the message of the last commit that changed {file}?',
  create_branch: 'Create a branch named {branch}.',
  commit_file: 'Commit {file} with the message "{message}".',
  count_commits: 'How many commits are in the history?',
  switch_new_branch: 'Create and switch to a new branch named {branch}.',
  write_commit: 'Create {file} containing {word} and commit it with the message "{message}".',
  restore_file: 'Undo the uncommitted changes to {file}.',
  branch_commit:
    'On a new branch {branch}, create {file} containing {word} and commit it with the message "{message}".',
  commit_all: 'Commit all changes with the message "{message}".',
};

export const GIT_LEVELS: Record<number, string[]> = {
  1: ['branch_message', 'file_message'],
  2: ['create_branch', 'commit_file'],
  3: ['count_commits', 'switch_new_branch'],
  4: ['write_commit', 'restore_file'],
  5: ['branch_commit', 'commit_all'],
};
