/** Catalog data for arith_tool: what each difficulty level draws, and how questions are worded. */

export interface ArithLevel {
  /** Number of operands (inclusive range). */
  operands: [number, number];
  /** Operand values (inclusive range). */
  values: [number, number];
  ops: ('+' | '-' | '*')[];
  /** Multiplication operands are capped here so results stay readable and exact in a double. */
  mulMax: number;
  /** Chance of grouping a sub-expression in parentheses. */
  parens: number;
}

export const ARITH_LEVELS: Record<number, ArithLevel> = {
  1: { operands: [2, 2], values: [1, 99], ops: ['+'], mulMax: 0, parens: 0 },
  2: { operands: [2, 2], values: [10, 999], ops: ['+', '-', '*'], mulMax: 99, parens: 0 },
  3: { operands: [3, 3], values: [10, 999], ops: ['+', '-', '*'], mulMax: 99, parens: 0 },
  4: { operands: [3, 4], values: [100, 9999], ops: ['+', '-', '*'], mulMax: 999, parens: 0.5 },
  5: { operands: [4, 5], values: [1000, 99999], ops: ['+', '-', '*'], mulMax: 999, parens: 0.7 },
};

/** `{expr}` is replaced by the expression. Short on purpose (tiny models). */
export const ARITH_PROMPTS = ['What is {expr}?', 'Compute {expr}.', 'Calculate {expr}.'];
