/**
 * Checks shared by the environments that work on a file system (shell_exec, git_repo): an expected
 * answer (integer, text or path) and/or an expected final file state, stored in `task.data` as plain
 * JSON so a stored trajectory can be re-scored later.
 */
import type { Trajectory } from '../contracts.ts';
import { cleanAnswer, finalAnswer, lastInteger } from './answer.ts';

export interface AnswerCheck {
  type: 'int' | 'text' | 'path';
  value: string | number;
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
  if (check.type === 'int') return lastInteger(answer) === check.value;
  const cleaned = cleanAnswer(answer.split('\n').filter((l) => l.trim()).pop() ?? '');
  if (check.type === 'text') return cleaned === String(check.value);
  // A path may come as "src/a.txt", "./src/a.txt" or "/src/a.txt", possibly after a lead-in ("It is at …").
  const last = cleaned.split(/\s+/).pop() ?? '';
  return normalizePath(cleanAnswer(last)) === normalizePath(String(check.value));
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
  const got = actual.split('\n').map((l) => l.trim()).filter(Boolean).sort();
  const want = [...expected.lines].sort();
  return got.length === want.length && got.every((l, i) => l === want[i]);
}
