/**
 * The `calc` tool's evaluator: arithmetic only, parsed and evaluated here — no `eval`, no QuickJS.
 * Grammar (lowest precedence first):
 *
 *   sum     := product (('+' | '-') product)*
 *   product := unary (('*' | '/' | '%') unary)*
 *   unary   := ('-' | '+') unary | power
 *   power   := atom ('**' unary)?          right-associative; -2**2 = -(2**2) = -4, as in maths and Python
 *   atom    := number | '(' sum ')'        numbers: 12, 3.5, .5, 1e3
 *
 * Results are rounded to 12 significant digits so float noise (0.1+0.2) does not reach the model.
 * Division by zero and non-finite results are errors, not Infinity/NaN.
 */

export class CalcError extends Error {
  override name = 'CalcError';
}

const MAX_LENGTH = 1000;
const MAX_NESTING = 100;

type Token = { kind: 'num'; value: number; at: number } | { kind: 'op'; value: string; at: number };

const TOKEN = /\s*(?:(\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|(\*\*|[-+*/%()]))/y;

function tokenize(expression: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  while (pos < expression.length) {
    if (/^\s*$/.test(expression.slice(pos))) break;
    TOKEN.lastIndex = pos;
    const m = TOKEN.exec(expression);
    if (!m) {
      const bad = expression.slice(pos).trimStart()[0];
      const hint = bad === '^' ? ' (use ** for powers)' : bad === 'x' || bad === '×' ? ' (use * to multiply)' : '';
      throw new CalcError(
        `unexpected character '${bad}' at position ${expression.length - expression.slice(pos).trimStart().length}${hint}; calc accepts numbers, + - * / % ** and parentheses`,
      );
    }
    const at = m.index + m[0].length - (m[1] ?? m[2]).length;
    tokens.push(m[1] !== undefined ? { kind: 'num', value: Number(m[1]), at } : { kind: 'op', value: m[2], at });
    pos = TOKEN.lastIndex;
  }
  return tokens;
}

class Parser {
  private i = 0;
  private depth = 0;
  constructor(private readonly tokens: Token[]) {}

  private peekOp(...ops: string[]): string | null {
    const t = this.tokens[this.i];
    return t?.kind === 'op' && ops.includes(t.value) ? t.value : null;
  }

  parse(): number {
    if (this.tokens.length === 0) throw new CalcError('empty expression');
    const value = this.sum();
    const rest = this.tokens[this.i];
    if (rest)
      throw new CalcError(`unexpected '${rest.kind === 'num' ? rest.value : rest.value}' at position ${rest.at}`);
    return value;
  }

  private sum(): number {
    let acc = this.product();
    for (let op = this.peekOp('+', '-'); op; op = this.peekOp('+', '-')) {
      this.i++;
      const rhs = this.product();
      acc = op === '+' ? acc + rhs : acc - rhs;
    }
    return acc;
  }

  private product(): number {
    let acc = this.unary();
    for (let op = this.peekOp('*', '/', '%'); op; op = this.peekOp('*', '/', '%')) {
      this.i++;
      const rhs = this.unary();
      if ((op === '/' || op === '%') && rhs === 0) throw new CalcError('division by zero');
      acc = op === '*' ? acc * rhs : op === '/' ? acc / rhs : acc % rhs;
    }
    return acc;
  }

  private unary(): number {
    const op = this.peekOp('-', '+');
    if (op) {
      this.i++;
      this.enter();
      const v = this.unary();
      this.depth--;
      return op === '-' ? -v : v;
    }
    return this.power();
  }

  private power(): number {
    const base = this.atom();
    if (!this.peekOp('**')) return base;
    this.i++;
    this.enter();
    const exponent = this.unary();
    this.depth--;
    return base ** exponent;
  }

  private atom(): number {
    const t = this.tokens[this.i];
    if (!t) throw new CalcError('expression ends too early (a number or "(" is missing)');
    if (t.kind === 'num') {
      this.i++;
      return t.value;
    }
    if (t.value === '(') {
      this.i++;
      this.enter();
      const v = this.sum();
      this.depth--;
      if (!this.peekOp(')')) throw new CalcError(`missing ')' for the '(' at position ${t.at}`);
      this.i++;
      return v;
    }
    throw new CalcError(`unexpected '${t.value}' at position ${t.at}`);
  }

  private enter(): void {
    if (++this.depth > MAX_NESTING) throw new CalcError(`expression nested deeper than ${MAX_NESTING} levels`);
  }
}

/** Evaluate an arithmetic expression; throws CalcError with a message meant for the model. */
export function evaluateArithmetic(expression: string): number {
  if (expression.length > MAX_LENGTH) throw new CalcError(`expression longer than ${MAX_LENGTH} characters`);
  const value = new Parser(tokenize(expression)).parse();
  if (!Number.isFinite(value)) throw new CalcError('the result is not a finite number');
  return Number(value.toPrecision(12));
}

/** The number as the tool prints it (no exponent for ordinary magnitudes, -0 as 0). */
export function formatNumber(value: number): string {
  return Object.is(value, -0) ? '0' : String(value);
}
