/**
 * Exact arithmetic on integer expressions (`+ - * / ( )`, unary minus) with BigInt rationals, for
 * environments that check answers exactly: countdown ("does this expression reach the target using only
 * these numbers?") and arith_tool (the expected value). Floating point would accept 7/3*3 ≈ 7 as wrong
 * or 0.1-style near misses as right; rationals never do.
 */

export interface Rational {
  num: bigint;
  den: bigint;
}

export interface ParsedExpression {
  value: Rational;
  /** The integer literals in the order they appear. */
  numbers: number[];
}

export class ExpressionError extends Error {
  override name = 'ExpressionError';
}

/** Parses and evaluates exactly; throws `ExpressionError` naming the problem (bad character, division by zero…). */
export function evaluateExact(source: string): ParsedExpression {
  const text = source.replace(/×/g, '*').replace(/÷/g, '/').replace(/−/g, '-');
  let pos = 0;
  const numbers: number[] = [];

  const skip = (): void => {
    while (pos < text.length && /\s/.test(text[pos])) pos++;
  };
  const peek = (): string => {
    skip();
    return text[pos] ?? '';
  };

  const primary = (): Rational => {
    const c = peek();
    if (c === '(') {
      pos++;
      const v = sum();
      if (peek() !== ')') throw new ExpressionError(`missing ")" at position ${pos}`);
      pos++;
      return v;
    }
    if (c === '-') {
      pos++;
      const v = primary();
      return { num: -v.num, den: v.den };
    }
    const m = /^\d+/.exec(text.slice(pos));
    if (!m) throw new ExpressionError(c ? `unexpected "${c}" at position ${pos}` : 'expression ends too early');
    pos += m[0].length;
    numbers.push(Number(m[0]));
    return { num: BigInt(m[0]), den: 1n };
  };

  const product = (): Rational => {
    let v = primary();
    for (let c = peek(); c === '*' || c === '/'; c = peek()) {
      pos++;
      const r = primary();
      if (c === '*') v = make(v.num * r.num, v.den * r.den);
      else if (r.num === 0n) throw new ExpressionError('division by zero');
      else v = make(v.num * r.den, v.den * r.num);
    }
    return v;
  };

  const sum = (): Rational => {
    let v = product();
    for (let c = peek(); c === '+' || c === '-'; c = peek()) {
      pos++;
      const r = product();
      v = make(c === '+' ? v.num * r.den + r.num * v.den : v.num * r.den - r.num * v.den, v.den * r.den);
    }
    return v;
  };

  const value = sum();
  if (peek() !== '') throw new ExpressionError(`unexpected "${peek()}" at position ${pos}`);
  return { value, numbers };
}

/** True when the rational equals the integer. */
export function equalsInteger(r: Rational, n: number): boolean {
  return r.den === 1n && r.num === BigInt(n);
}

/** The value as a number when it is an integer, else null. */
export function toInteger(r: Rational): number | null {
  return r.den === 1n ? Number(r.num) : null;
}

function make(num: bigint, den: bigint): Rational {
  if (den < 0n) {
    num = -num;
    den = -den;
  }
  const g = gcd(num < 0n ? -num : num, den);
  return g > 1n ? { num: num / g, den: den / g } : { num, den };
}

function gcd(a: bigint, b: bigint): bigint {
  while (b) [a, b] = [b, a % b];
  return a || 1n;
}
