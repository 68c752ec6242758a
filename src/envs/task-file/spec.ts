/**
 * A task file as an environment: `taskFileSpec(name, rows, options)` gives the `EnvironmentSpec` that
 * `defineEnvironment` turns into an environment like any built-in one.
 *
 * - Levels are the rows' `level` (default 1); `difficulties` lists the levels present.
 * - `sample(rng, level)` draws a row of that level. The item's key is the row's canonical content (its
 *   prompt, whitespace collapsed and lower-cased, and its choices), so define.ts's hash split keeps a
 *   question in one split however often it appears. A row's explicit `split` pins it (`TaskItem.split`);
 *   rows sharing a key share a pin, and two different pins for one question are a problem.
 * - Tools: each row's `tools` (built-in tools only); `requiredTools` is their union.
 * - `evaluate` applies the row's verifier (its own, else `options.verifier`, else `exact`) to the final
 *   answer. A verdict the verifier cannot give is null; its reason goes to `options.onUnscored`, and
 *   `verify(task, trajectory)` returns score and reason together.
 * - `expert(task)` answers with the row's answer in one final turn; there is no expert when a row's
 *   verifier is `js` or a `regex` whose pattern is the row's answer (nothing to write that surely passes).
 * - `chance(level)`: what a task-blind policy gets by luck, the larger of the share of the level's rows a
 *   single constant answer solves (the most common answer, when two rows or more share it: "yes", "B",
 *   "0") and the mean 1/k of its
 *   multiple-choice rows with k choices. For a four-choice file that is 0.25 or more, above the 0.1 the
 *   built-in environments keep to: success rates on such a file must be read against it.
 *
 * Everything wrong with the rows or the verifier is thrown at once as a `TaskFileError`.
 */
import type { Split, Task, Trajectory } from '../../contracts.ts';
import { finalAnswer } from '../answer.ts';
import { answerTurn } from '../expert-text.ts';
import { KNOWN_TOOLS, type EnvironmentSpec, type TaskItem } from '../types.ts';
import { normalizeRow, TaskFileError, type TaskRow } from './rows.ts';
import type { Verdict, VerifierRow } from './verdict.ts';
import {
  checkVerifier,
  CHOICE_LETTERS,
  optionCount,
  prepareReference,
  verify,
  type VerifierConfig,
} from './verifiers.ts';

export interface TaskFileOptions {
  /** The config's verifier (`tasks.verifier`): for rows without their own; null or absent: `exact`. */
  verifier?: VerifierConfig | null;
  description?: string;
  /** Told when a verdict is null (the verifier could not decide), with the reason. */
  onUnscored?: (task: Task, reason: string) => void;
}

/** The spec, plus the verdict with its reason and the rows it was built from. */
export interface TaskFileSpec extends EnvironmentSpec {
  verify(task: Task, trajectory: Trajectory): Promise<Verdict>;
  /**
   * Tries each distinct js verifier once, on the first row it checks, with that row's own answer: the
   * problems of those that gave no score (a syntax error, a promise that never settles, NaN), each naming
   * the row. Such a verifier can score no answer at all. `check` runs before each try (a check's budget).
   */
  tryVerifiers(check?: () => void): Promise<string[]>;
  readonly rows: readonly TaskRow[];
}

/** What a task carries in `task.data`: the row (JSON) and its resolved verifier. */
interface RowData {
  row: TaskRow;
  verifier: VerifierConfig;
}

const DEFAULT_VERIFIER: VerifierConfig = { type: 'exact' };

const INSTRUCTIONS: Partial<Record<VerifierConfig['type'], string>> = {
  number: 'End with the final answer as a number.',
  choice: 'Answer with the letter of the correct choice.',
};

export function taskFileSpec(name: string, rows: TaskRow[], options: TaskFileOptions = {}): TaskFileSpec {
  const { checked, fallback } = checkedRows(name, rows, options);
  const verifierOf = (row: TaskRow) => row.verifier ?? fallback;
  const byLevel = rowsByLevel(checked);
  const types = [...new Set(checked.map((r) => verifierOf(r).type))];
  const tools = KNOWN_TOOLS.filter((t) => checked.some((r) => r.tools?.includes(t)));
  const chanceByLevel = new Map([...byLevel].map(([level, list]) => [level, blindLuck(list, verifierOf)]));

  const verifyTask = async (task: Task, trajectory: Trajectory): Promise<Verdict> => {
    const data = task.data as unknown as RowData;
    if (!data?.row || !data.verifier) return { score: null, reason: `task ${task.id} carries no task-file row` };
    return verify(data.verifier, finalAnswer(trajectory), verifierRow(data.row), trajectory);
  };

  const spec: TaskFileSpec = {
    name,
    description:
      options.description ??
      `Questions from a task file (${checked.length} rows; answers checked by ${types.join(', ')}).`,
    tags: ['task-file'],
    difficulties: [...byLevel.keys()].sort((a, b) => a - b),
    requiredTools: tools,
    instructions: types.length === 1 ? INSTRUCTIONS[types[0]] : undefined,
    rows: checked,
    sample(rng, difficulty): TaskItem {
      const row = rng.pick(byLevel.get(difficulty) ?? []);
      const data: RowData = { row, verifier: verifierOf(row) };
      const item: TaskItem = {
        prompt: promptOf(row),
        data: data as unknown as Record<string, unknown>,
        key: rowKey(row),
      };
      if (row.split) item.split = row.split;
      return item;
    },
    async evaluate(task, trajectory) {
      const verdict = await verifyTask(task, trajectory);
      if (verdict.score === null) options.onUnscored?.(task, verdict.reason);
      return verdict.score;
    },
    verify: verifyTask,
    chance: (difficulty) => chanceByLevel.get(difficulty) ?? 0,
    tryVerifiers: (check = () => {}) => tryJsVerifiers(checked, verifierOf, check),
  };
  if (checked.every((r) => prepareReference(verifierOf(r), verifierRow(r)).expert !== null)) {
    spec.expert = (task: Task) => {
      const { row, verifier } = task.data as unknown as RowData;
      return [answerTurn(prepareReference(verifier, verifierRow(row)).expert ?? '')];
    };
  }
  return spec;
}

/** The rows checked and normalized, and the verifier of rows that name none; throws every problem found at once. */
function checkedRows(
  name: string,
  rows: TaskRow[],
  options: TaskFileOptions,
): { checked: TaskRow[]; fallback: VerifierConfig } {
  const problems: string[] = [];
  let fallback = DEFAULT_VERIFIER;
  if (options.verifier) {
    const checked = checkVerifier(options.verifier, 'tasks.verifier');
    problems.push(...checked.problems.map((p) => p.message));
    if (checked.verifier) fallback = checked.verifier;
  }
  const checked: TaskRow[] = [];
  rows.forEach((given, i) => {
    const where = given?.source ?? `row ${i + 1}`;
    const { extra, source: _source, ...fields } = given ?? ({} as TaskRow);
    const row = normalizeRow({ ...extra, ...fields }, where, problems);
    if (!row) return;
    const reference = prepareReference(row.verifier ?? fallback, verifierRow(row));
    if (reference.problem) problems.push(`${where}: ${reference.problem}`);
    else checked.push(row);
  });
  if (!rows.length) problems.push('there are no rows; a task file needs at least one row with "prompt" and "answer"');
  pinSharedSplits(checked, problems);
  if (problems.length) throw new TaskFileError(problems, name);
  return { checked, fallback };
}

/** The rows of each level, a row without one at level 1. */
function rowsByLevel(checked: TaskRow[]): Map<number, TaskRow[]> {
  const byLevel = new Map<number, TaskRow[]>();
  for (const row of checked) {
    const level = row.level ?? 1;
    if (!byLevel.has(level)) byLevel.set(level, []);
    byLevel.get(level)!.push(row);
  }
  return byLevel;
}

/** Each distinct js verifier tried on its row's own answer: one that gives no score can score no answer. */
async function tryJsVerifiers(
  checked: TaskRow[],
  verifierOf: (row: TaskRow) => VerifierConfig,
  check: () => void,
): Promise<string[]> {
  const tried = new Set<string>();
  const problems: string[] = [];
  for (const row of checked) {
    const verifier = verifierOf(row);
    if (verifier.type !== 'js' || tried.has(JSON.stringify(verifier))) continue;
    tried.add(JSON.stringify(verifier));
    check();
    const answer = String(row.answer);
    const verdict = await verify(verifier, answer, verifierRow(row), ownAnswerEpisode(promptOf(row), answer));
    if (verdict.score !== null) continue;
    const why = `the js verifier gives no score even for the row's own answer (${verdict.reason})`;
    problems.push(`${row.source}: ${why}, so it can score no answer; fix its source`);
  }
  return problems;
}

/** An episode that answers `answer` at once, as a verifier's trial sees it. */
function ownAnswerEpisode(prompt: string, answer: string): Trajectory {
  const messages = [
    { role: 'user' as const, content: prompt },
    { role: 'assistant' as const, content: answer },
  ];
  return { final_response: answer, finish_reason: 'answer', messages, steps: [] } as unknown as Trajectory;
}

/** The user message: the prompt, and a multiple-choice row's options as "A) …" lines. */
function promptOf(row: TaskRow): string {
  if (!row.choices?.length) return row.prompt;
  return `${row.prompt}\n${row.choices.map((c, i) => `${CHOICE_LETTERS[i]}) ${c}`).join('\n')}`;
}

/** The canonical content that decides a row's split: the prompt (whitespace collapsed, lower case) and its choices. */
export function rowKey(row: TaskRow): string {
  const prompt = row.prompt.replace(/\s+/g, ' ').trim().toLowerCase();
  return row.choices?.length ? `${prompt}\u0000${row.choices.join('\u0001')}` : prompt;
}

/** What a verifier reads of a row: its fields, with the extra ones alongside. */
function verifierRow(row: TaskRow): VerifierRow {
  const { extra, source: _source, verifier: _verifier, ...fields } = row;
  return { ...extra, ...fields, answer: row.answer };
}

/** Rows of one question share a pinned split (else one could land in train, its twin in test). */
function pinSharedSplits(rows: TaskRow[], problems: string[]): void {
  const pins = new Map<string, { split: Split; where: string }>();
  for (const row of rows) {
    if (!row.split) continue;
    const key = rowKey(row);
    const pinned = pins.get(key);
    if (pinned && pinned.split !== row.split) {
      problems.push(
        `${row.source}: "split" is ${row.split} but ${pinned.where} asks the same question in ${pinned.split}; a question belongs to one split`,
      );
    } else pins.set(key, { split: row.split, where: row.source ?? 'a row' });
  }
  for (const row of rows) {
    const pinned = pins.get(rowKey(row));
    if (pinned && !row.split) row.split = pinned.split;
  }
}

/** The luck of a task-blind policy on a level's rows (see the header). */
function blindLuck(rows: TaskRow[], verifierOf: (row: TaskRow) => VerifierConfig): number {
  const counts = new Map<string, number>();
  let choiceLuck = 0;
  for (const row of rows) {
    const verifier = verifierOf(row);
    const canonical = prepareReference(verifier, verifierRow(row)).canonical;
    if (canonical !== null)
      counts.set(`${verifier.type}\u0000${canonical}`, (counts.get(`${verifier.type}\u0000${canonical}`) ?? 0) + 1);
    if (verifier.type === 'choice')
      choiceLuck += 1 / (optionCount(verifier, verifierRow(row)) ?? CHOICE_LETTERS.length);
  }
  // An answer only one row has is no luck a blind policy can plan for (it would be 1/n on any file).
  const constant = Math.max(0, ...[...counts.values()].filter((c) => c >= 2));
  return Math.max(constant, choiceLuck) / rows.length;
}
