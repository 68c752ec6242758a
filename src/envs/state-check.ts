/**
 * Checks shared by the environments that work on a file system (shell_exec, git_repo): an expected
 * answer (integer, text or path) and/or an expected final file state, stored in `task.data` as plain
 * JSON so a stored trajectory can be re-scored later.
 *
 * A question is a success only when a tool call found the answer (its output shows it, and its command
 * names the question's target when the question has one) and the final answer states it; either alone
 * is half credit (`scoreParts`). A change is a success when the replayed final state is right.
 */
import type { Trajectory } from '../contracts.ts';
import { cleanAnswer, finalAnswer, integerAnswer } from './answer.ts';
import { containsToken, scoreParts, toolDidTheWork } from './evidence.ts';

export interface AnswerCheck {
  type: 'int' | 'text' | 'path';
  value: string | number;
  /** A file, directory or name the question asks about: a call that found the answer must name it. */
  target?: string;
  /**
   * The call's output must be the answer and nothing else: where the answer is a file's content, a call that
   * dumps several files shows it without saying which lines are the target's, and answering from it is a guess.
   */
  alone?: boolean;
}

/** Path → expected content (compared without trailing whitespace), or null when the file must not exist. */
export type FileExpectations = Record<string, string | null>;

/** Files whose lines, in any order, must be exactly these. */
export interface LinesExpectation {
  path: string;
  lines: string[];
}

export function normalizePath(path: string): string {
  return path.trim().replace(/^\.\//, '').replace(/^\/+/, '').replace(/\/+$/, '');
}

export function answerMatches(trajectory: Trajectory, check: AnswerCheck): boolean {
  const answer = finalAnswer(trajectory);
  // The whole answer is compared, never its last line or word: echoing a tool's output answers nothing.
  if (check.type === 'int') return integerAnswer(answer) === check.value;
  const cleaned = cleanAnswer(answer);
  if (check.type === 'text') return cleaned === String(check.value);
  // A path may come as "src/a.txt", "./src/a.txt" or "/src/a.txt".
  return normalizePath(cleaned) === normalizePath(String(check.value));
}

export function filesMatch(snapshot: Record<string, string>, expected: FileExpectations): boolean {
  return Object.entries(expected).every(([path, content]) => {
    const actual = snapshot[normalizePath(path)];
    return content === null ? actual === undefined : actual !== undefined && actual.trimEnd() === content.trimEnd();
  });
}

export function linesMatch(snapshot: Record<string, string>, expected: LinesExpectation): boolean {
  const actual = snapshot[normalizePath(expected.path)];
  if (actual === undefined) return false;
  const got = actual
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .sort();
  const want = [...expected.lines].sort();
  return got.length === want.length && got.every((l, i) => l === want[i]);
}

/** True when a tool's output shows the answer: the value as a token, or (for a count) that many lines. */
function outputShowsAnswer(output: string, check: AnswerCheck): boolean {
  if (check.alone) return output.trim() === String(check.value);
  if (check.type === 'int')
    return (
      containsToken(output, String(check.value)) || output.split('\n').filter((l) => l.trim()).length === check.value
    );
  if (check.type === 'text') return containsToken(output, String(check.value));
  const paths = output.split(/\s+/).map(normalizePath);
  return paths.includes(normalizePath(String(check.value)));
}

/** The score of a question task: a tool call that found the answer, and the final answer stating it. */
export function scoreQuestion(trajectory: Trajectory, check: AnswerCheck, tools: readonly string[]): number {
  const worked = toolDidTheWork(trajectory, {
    tools,
    mentions: (command) => check.target === undefined || command.includes(check.target),
    result: (output) => outputShowsAnswer(output, check),
  });
  return scoreParts(worked, answerMatches(trajectory, check));
}
