/**
 * arith_tool: an arithmetic question the model should answer by calling `calc`. Level 1 is a + b with
 * 1–2 digit numbers (RL from a tiny model starts there); higher levels add operands, digits,
 * subtraction, multiplication and parentheses. Integer results only.
 *
 * Success (score 1) needs both parts of `scoreParts`: a successful calc/js call whose source uses every
 * operand of the question and whose result is the value, and a final answer that is exactly that
 * integer. Either part alone is half credit. Splits go by the question's canonical form (operands and
 * operators as multisets, and the value), so `58 + 23` in test never has `23 + 58` in train.
 */
import type { Task, Trajectory } from '../contracts.ts';
import { finalAnswer, integerAnswer } from './answer.ts';
import { ARITH_LEVELS, ARITH_PROMPTS } from './data/arith.ts';
import { scoreParts, toolDidTheWork } from './evidence.ts';
import { answerTurn, callTurn } from './expert-text.ts';
import { evaluateExact, toInteger } from './expr.ts';
import type { Rng } from '../rng.ts';
import type { EnvironmentSpec, TaskItem } from './types.ts';

/** Results stay well inside what a double and the calc tool print exactly. */
const MAX_ABS_RESULT = 1e12;

function operand(rng: Rng, min: number, max: number): number {
  return rng.int(min, max);
}

function drawExpression(rng: Rng, difficulty: number): { expr: string; value: number } {
  const level = ARITH_LEVELS[difficulty];
  for (;;) {
    const count = rng.int(level.operands[0], level.operands[1]);
    const ops = Array.from({ length: count - 1 }, () => rng.pick(level.ops));
    // A multiplication operand is drawn smaller so products stay readable.
    const values = Array.from({ length: count }, (_, i) =>
      ops[i - 1] === '*' || ops[i] === '*'
        ? operand(rng, 2, Math.min(level.mulMax, level.values[1]))
        : operand(rng, level.values[0], level.values[1]),
    );
    const parts = values.map(String);
    if (count >= 3 && rng.chance(level.parens)) {
      const at = rng.int(0, count - 2);
      parts[at] = `(${parts[at]}`;
      parts[at + 1] = `${parts[at + 1]})`;
    }
    const expr = parts.reduce((acc, p, i) => (i === 0 ? p : `${acc} ${ops[i - 1]} ${p}`), '');
    const value = toInteger(evaluateExact(expr).value);
    if (value !== null && Math.abs(value) <= MAX_ABS_RESULT) return { expr, value };
  }
}

const integersIn = (text: string): number[] => (text.match(/\d+/g) ?? []).map(Number);

/** True when `have` contains every element of `need`, counted with multiplicity. */
function containsAll(have: number[], need: number[]): boolean {
  const left = [...have];
  return need.every((n) => {
    const i = left.indexOf(n);
    if (i >= 0) left.splice(i, 1);
    return i >= 0;
  });
}

/** The same question however it is ordered: sorted operands, sorted operators, the value. */
function canonicalKey(expr: string, value: number): string {
  const ops = (expr.match(/[+\-*]/g) ?? []).sort().join('');
  return `${ops}|${integersIn(expr)
    .sort((a, b) => a - b)
    .join(',')}|=${value}`;
}

export const arithTool: EnvironmentSpec = {
  name: 'arith_tool',
  description: 'Arithmetic questions answered by calling the calc tool.',
  tags: ['math', 'tool-use', 'starter'],
  requiredTools: ['calc'],
  systemStyle: 'compact',
  sample(rng, difficulty): TaskItem {
    const { expr, value } = drawExpression(rng, difficulty);
    const prompt = rng.pick(ARITH_PROMPTS).replace('{expr}', expr);
    return { prompt, data: { expression: expr, answer: value }, key: canonicalKey(expr, value) };
  },
  evaluate(task: Task, trajectory: Trajectory): number {
    const value = task.data.answer as number;
    const operands = integersIn(String(task.data.expression));
    const worked = toolDidTheWork(trajectory, {
      tools: ['calc', 'js'],
      mentions: (source) => containsAll(integersIn(source), operands),
      result: (text) => integerAnswer(text) === value,
    });
    return scoreParts(worked, integerAnswer(finalAnswer(trajectory)) === value);
  },
  expert(task: Task): string[] {
    const expression = String(task.data.expression);
    return [callTurn('Use calc.', [{ name: 'calc', arguments: { expression } }]), answerTurn(String(task.data.answer))];
  },
};
