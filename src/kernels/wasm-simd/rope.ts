/**
 * RoPE in WebAssembly SIMD (fused.ts's ROPE_KERNEL; wasm-fused.ts registers it), over x [B, H, T, D]
 * with D/2 a multiple of 4 (the caller checks):
 *
 *   rope(x, cos, sin, out, rows, D, T, H, perRow, sign)
 *     out[d]       = x[d]·cos[d]             − (sign·x[d + D/2])·sin[d]
 *     out[d + D/2] = x[d + D/2]·cos[d + D/2] + (sign·x[d])·sin[d + D/2]       for d < D/2
 *
 * Row r of x (rows = B·H·T) is position t = r mod T of batch row b = r div (H·T); its table row is
 * t, or b·T + t when the tables are per batch row (perRow, [B, 1, T, D]). sign −1 rotates back (the
 * gradient). Same operations, in the same order, as the JS loop it replaces.
 */
import { forRange, FunctionBody, type ExportedFunction } from './assembler.ts';

const [X, COS, SIN, OUT, ROWS, D, T, H, PER_ROW, SIGN] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];

export function ropeFunction(): ExportedFunction {
  const f = new FunctionBody(['i32', 'i32', 'i32', 'i32', 'i32', 'i32', 'i32', 'i32', 'i32', 'f32']);
  const [row, base, table, d, halfBytes] = [
    f.local('i32'),
    f.local('i32'),
    f.local('i32'),
    f.local('i32'),
    f.local('i32'),
  ];
  const [sign, xa, xb] = [f.local('v128'), f.local('v128'), f.local('v128')];
  f.get(SIGN).f32x4_splat().set(sign);
  f.get(D).i32_const(2).i32_mul().set(halfBytes); // (D/2)·4 bytes
  forRange(
    f,
    row,
    () => f.i32_const(0),
    () => f.get(ROWS),
    1,
    () => {
      // base = row·D·4; table = (t + perRow·b·T)·D·4
      f.get(row).get(D).i32_mul().i32_const(4).i32_mul().set(base);
      f.get(row).get(T).i32_rem_u();
      f.get(row).get(H).get(T).i32_mul().i32_div_u().get(T).i32_mul().get(PER_ROW).i32_mul();
      f.i32_add().get(D).i32_mul().i32_const(4).i32_mul().set(table);
      f.i32_const(0).set(d);
      f.loop();
      const load = (array: number, offsetLocal: number, plusHalf: boolean) => {
        f.get(array).get(offsetLocal).i32_add().get(d).i32_add();
        if (plusHalf) f.get(halfBytes).i32_add();
        f.v128_load(0);
      };
      load(X, base, false);
      f.set(xa);
      load(X, base, true);
      f.set(xb);
      // out[d] = xa·cos[d] − (sign·xb)·sin[d]
      f.get(OUT).get(base).i32_add().get(d).i32_add();
      f.get(xa);
      load(COS, table, false);
      f.f32x4_mul().get(sign).get(xb).f32x4_mul();
      load(SIN, table, false);
      f.f32x4_mul().f32x4_sub().v128_store(0);
      // out[d + D/2] = xb·cos[d + D/2] + (sign·xa)·sin[d + D/2]
      f.get(OUT).get(base).i32_add().get(d).i32_add().get(halfBytes).i32_add();
      f.get(xb);
      load(COS, table, true);
      f.f32x4_mul().get(sign).get(xa).f32x4_mul();
      load(SIN, table, true);
      f.f32x4_mul().f32x4_add().v128_store(0);
      f.get(d).i32_const(16).i32_add().tee(d).get(halfBytes).i32_lt_u().br_if(0);
      f.end();
    },
  );
  return { name: 'rope', body: f };
}
