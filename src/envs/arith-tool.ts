/**
 * arith_tool: an arithmetic question the model should answer by calling `calc`. Level 1 is a + b with
 * 1–2 digit numbers (RL from a tiny model starts there); higher levels add operands, digits,
 * subtraction, multiplication and parentheses. Integer results only. A correct answer scores 1 after a
 * successful tool call and ARITH_NO_TOOL_CREDIT without one; a wrong answer scores 0.
 */
import type { Task, Trajectory } from '../contracts.ts';
import { finalAnswer, lastInteger, usedToolSuccessfully } from './answer.ts';
import { ARITH_LEVELS, ARITH_NO_TOOL_CREDIT, ARITH_PROMPTS } from './data/arith.ts';
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
      ops[i - 1] === '*' || ops[i] === '*' ? operand(rng, 2, Math.min(level.mulMax, level.values[1])) : operand(rng, level.values[0], level.values[1]),
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

export const arithTool: EnvironmentSpec = {
  name: 'arith_tool',
  description: 'Arithmetic questions answered by calling the calc tool.',
  tags: ['math', 'tool-use', 'starter'],
  requiredTools: ['calc'],
  systemStyle: 'compact',
  sample(rng, difficulty): TaskItem {
    const { expr, value } = drawExpression(rng, difficulty);
    const prompt = rng.pick(ARITH_PROMPTS).replace('{expr}', expr);
    return { prompt, data: { expression: expr, answer: value }, key: expr.replace(/\s+/g, '') };
  },
  evaluate(task: Task, trajectory: Trajectory): number {
    const given = lastInteger(finalAnswer(trajectory));
    if (given !== task.data.answer) return 0;
    return usedToolSuccessfully(trajectory, ['calc', 'js']) ? 1 : ARITH_NO_TOOL_CREDIT;
  },
  expert(task: Task): string[] {
    const expression = String(task.data.expression);
    return [callTurn('Use calc.', [{ name: 'calc', arguments: { expression } }]), answerTurn(String(task.data.answer))];
  },
};
