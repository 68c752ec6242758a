/**
 * countdown: reach a target number from given numbers with + - * / (each number at most once). Items
 * are built backwards from a random expression, so each has a known solution (the expert's). The answer
 * is an expression, checked exactly with rationals: it must use only the given numbers (as a multiset)
 * and equal the target. Success needs that answer and a calc call that checked such an expression
 * (`scoreParts`; either alone is half credit). Targets that a fixed formula reaches are never drawn
 * (`formulaTargets`: one operation on the two smallest or the two largest numbers, the sum or the product
 * of all), so no recipe that skips the search solves a puzzle; level 1 gives three numbers, so its
 * solutions use two of them (the smallest and the largest) or all three.
 */
import type { Task, Trajectory } from '../contracts.ts';
import { cleanAnswer, finalAnswer } from './answer.ts';
import { COUNTDOWN_LEVELS, COUNTDOWN_PROMPT } from './data/countdown.ts';
import { answerTurn, callTurn } from './expert-text.ts';
import { ExpressionError, equalsInteger, evaluateExact } from './expr.ts';
import type { Rng } from '../rng.ts';
import { scoreParts, toolDidTheWork } from './evidence.ts';
import type { EnvironmentSpec, TaskItem } from './types.ts';

type Op = '+' | '-' | '*' | '/';

interface Node {
  text: string;
  value: number;
  /** The top-level operator, null for a bare number: decides where parentheses are needed. */
  op: Op | null;
}

const precedence = (op: Op | null): number => (op === null ? 3 : op === '*' || op === '/' ? 2 : 1);

/** `a op b` with only the parentheses the grammar needs, so the expert writes `1 + 10 + 5 * 5`. */
function join(a: Node, op: Op, b: Node, value: number): Node {
  const left = precedence(a.op) < precedence(op) ? `(${a.text})` : a.text;
  const tight =
    precedence(b.op) < precedence(op) || (precedence(b.op) === precedence(op) && (op === '-' || op === '/'));
  return { text: `${left} ${op} ${tight ? `(${b.text})` : b.text}`, value, op };
}

/** Combines two sub-results with an operator that keeps the value a positive integer. */
function combine(rng: Rng, a: Node, b: Node): Node {
  const options: Node[] = [join(a, '+', b, a.value + b.value), join(a, '*', b, a.value * b.value)];
  if (a.value > b.value) options.push(join(a, '-', b, a.value - b.value));
  if (b.value > 1 && a.value % b.value === 0) options.push(join(a, '/', b, a.value / b.value));
  // Multiplying by 1 or adding trivial results makes dull puzzles; keep them but do not prefer them.
  const interesting = options.filter((o) => o.value !== a.value && o.value !== b.value);
  return rng.pick(interesting.length ? interesting : options);
}

/** Every value of `a op b` (either order) that is a positive integer. */
function pairValues(a: number, b: number): number[] {
  const [hi, lo] = a >= b ? [a, b] : [b, a];
  return [hi + lo, hi * lo, hi - lo, ...(lo > 0 && hi % lo === 0 ? [hi / lo] : [])];
}

/**
 * The targets a fixed formula reaches without searching: one operation on the two smallest or on the
 * two largest numbers (the first or last two as the prompt lists them, sorted), the sum or the product
 * of all. A blind policy tries exactly these (src/rollout/blind-policies.ts), so they are never asked.
 */
function formulaTargets(numbers: number[]): Set<number> {
  const sorted = [...numbers].sort((x, y) => x - y);
  const out = new Set<number>([sorted.reduce((a, b) => a + b, 0), sorted.reduce((a, b) => a * b, 1)]);
  if (sorted.length >= 2) {
    for (const v of pairValues(sorted[0], sorted[1])) out.add(v);
    for (const v of pairValues(sorted.at(-2)!, sorted.at(-1)!)) out.add(v);
  }
  return out;
}

function drawPuzzle(rng: Rng, difficulty: number): { numbers: number[]; target: number; solution: string } {
  const level = COUNTDOWN_LEVELS[difficulty];
  for (;;) {
    const numbers = Array.from({ length: level.count }, () => rng.pick(level.pool));
    const used = rng.int(Math.min(2, level.count), level.count);
    let pool: Node[] = rng
      .shuffle(numbers)
      .slice(0, used)
      .map((n): Node => ({ text: String(n), value: n, op: null }));
    while (pool.length > 1) {
      const [a, b, ...rest] = pool;
      pool = rng.shuffle([combine(rng, a, b), ...rest]);
    }
    const [result] = pool;
    if (result.value < level.minTarget || result.value > level.maxTarget || numbers.includes(result.value)) continue;
    // A target that a fixed formula reaches is solved without search: redraw.
    if (formulaTargets(numbers).has(result.value)) continue;
    return { numbers: numbers.sort((x, y) => x - y), target: result.value, solution: result.text };
  }
}

/** The expression part of an answer: drops an "= target" tail and wrapping quotes/backticks. */
function answerExpression(answer: string): string {
  const line =
    cleanAnswer(answer)
      .split('\n')
      .filter((l) => l.trim())
      .pop() ?? '';
  return cleanAnswer(line.split('=')[0]);
}

/** True when every number used is available (each given number at most once). */
function usesOnly(used: number[], given: number[]): boolean {
  const left = [...given];
  for (const n of used) {
    const i = left.indexOf(n);
    if (i < 0) return false;
    left.splice(i, 1);
  }
  return true;
}

/** True when the expression uses only the given numbers and equals the target exactly. */
function solves(expression: string, numbers: number[], target: number): boolean {
  try {
    const parsed = evaluateExact(expression);
    return usesOnly(parsed.numbers, numbers) && equalsInteger(parsed.value, target);
  } catch (error) {
    if (error instanceof ExpressionError) return false;
    throw error;
  }
}

export const countdown: EnvironmentSpec = {
  name: 'countdown',
  description: 'Reach a target number from given numbers with + - * /.',
  tags: ['math', 'search', 'tool-use'],
  requiredTools: ['calc'],
  systemStyle: 'compact',
  sample(rng, difficulty): TaskItem {
    const { numbers, target, solution } = drawPuzzle(rng, difficulty);
    const prompt = COUNTDOWN_PROMPT.replace('{target}', String(target)).replace('{numbers}', numbers.join(', '));
    return { prompt, data: { numbers, target, solution }, key: `${numbers.join(',')}|${target}` };
  },
  evaluate(task: Task, trajectory: Trajectory): number {
    const numbers = task.data.numbers as number[];
    const target = task.data.target as number;
    const worked = toolDidTheWork(trajectory, {
      tools: ['calc'],
      mentions: (expression) => solves(expression, numbers, target),
      result: (value) => value.trim() === String(target),
    });
    return scoreParts(worked, solves(answerExpression(finalAnswer(trajectory)), numbers, target));
  },
  expert(task: Task): string[] {
    const solution = String(task.data.solution);
    return [
      callTurn(`Try ${solution}.`, [{ name: 'calc', arguments: { expression: solution } }]),
      answerTurn(solution),
    ];
  },
};
