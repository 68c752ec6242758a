/**
 * exp of four floats at once, emitted inline (WebAssembly has no exp instruction, and a call out to
 * JS's Math.exp costs 15–30 ns an element): Cephes' expf, a degree-5 polynomial on the remainder of a
 * base-2 range reduction, about 1 ulp from the true value. Inputs are clamped to [−87.3, 88]: below,
 * the result is 2⁻¹²⁶ (≈ 1e−38, a softmax's masked or padded key) instead of 0; above, 1.6e38.
 */
import type { FunctionBody } from './assembler.ts';

const LOG2E = Math.LOG2E;
/** ln 2 split in two, so that n·ln2 is subtracted without rounding error. */
const LN2_HIGH = 0.693359375;
const LN2_LOW = -2.1219444e-4;
const POLYNOMIAL = [1.98756915e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1];
const MIN_INPUT = -87.33654; // ln 2⁻¹²⁶
const MAX_INPUT = 88;
/** 1.5·2²³: adding it to a small whole float leaves the number in the low mantissa bits. */
const ROUNDING_BIAS = 12582912;
const ROUNDING_BIAS_BITS = 0x4b400000;

/** Locals the expansion works in. */
export interface ExpLocals {
  x: number;
  n: number;
  p: number;
}

export function expLocals(f: FunctionBody): ExpLocals {
  return { x: f.local('v128'), n: f.local('v128'), p: f.local('v128') };
}

/** Pushes exp(v.x) (v.x is overwritten). */
export function emitExp(f: FunctionBody, v: ExpLocals): void {
  f.get(v.x).f32x4_const(MIN_INPUT).f32x4_pmax().f32x4_const(MAX_INPUT).f32x4_pmin().set(v.x); // pmax/pmin: NaN stays NaN either way
  f.get(v.x).f32x4_const(LOG2E).f32x4_mul().f32x4_nearest().set(v.n);
  // x − n·ln2, in two steps
  f.get(v.x).get(v.n).f32x4_const(LN2_HIGH).f32x4_mul().f32x4_sub();
  f.get(v.n).f32x4_const(LN2_LOW).f32x4_mul().f32x4_sub().set(v.x);
  // p = (((((P0·x + P1)·x + P2)·x + P3)·x + P4)·x + P5)·x² + x + 1
  f.f32x4_const(POLYNOMIAL[0]).set(v.p);
  for (const c of POLYNOMIAL.slice(1)) f.get(v.p).get(v.x).f32x4_mul().f32x4_const(c).f32x4_add().set(v.p);
  f.get(v.p).get(v.x).get(v.x).f32x4_mul().f32x4_mul().get(v.x).f32x4_add().f32x4_const(1).f32x4_add();
  // · 2ⁿ, built in the exponent bits: (n + 127) << 23. n + 127 is read off the float n + 1.5·2²³ + 127
  // (exact for these whole n: its low mantissa bits are n + 127), which x86 does in two instructions
  // where the saturating conversion takes several.
  f.get(v.n)
    .f32x4_const(ROUNDING_BIAS + 127)
    .f32x4_add()
    .i32_const(ROUNDING_BIAS_BITS)
    .i32x4_splat()
    .i32x4_sub()
    .i32_const(23)
    .i32x4_shl();
  f.f32x4_mul();
}
