/**
 * The sum of squares of n floats in WebAssembly SIMD, for a global gradient norm:
 *
 *   sumSquares(x, n, out)      out[0] = Σ x[i]²   (float32: four lanes in order, then the last n mod 4)
 *
 * As tfjs ops the norm was a square and a sum per variable, each a pass over it, plus the adds between.
 */
import { emitLaneReduce, forRange, FunctionBody, type ExportedFunction } from './assembler.ts';

const [X, N, OUT] = [0, 1, 2];

export function sumSquaresFunction(): ExportedFunction {
  const f = new FunctionBody(['i32', 'i32', 'i32']);
  const [offset, vectorEnd] = [f.local('i32'), f.local('i32')];
  const [acc, v] = [f.local('v128'), f.local('v128')];
  const sum = f.local('f32');
  const square = f.local('f32');
  f.get(N).get(N).i32_const(4).i32_rem_u().i32_sub().i32_const(4).i32_mul().set(vectorEnd);
  f.v128_const0().set(acc);
  forRange(
    f,
    offset,
    () => f.i32_const(0),
    () => f.get(vectorEnd),
    16,
    () => {
      f.get(X).get(offset).i32_add().v128_load().set(v);
      f.get(acc).get(v).get(v).f32x4_mul().f32x4_add().set(acc);
    },
  );
  emitLaneReduce(f, acc, () => f.f32_add());
  f.set(sum);
  forRange(
    f,
    offset,
    () => f.get(vectorEnd),
    () => f.get(N).i32_const(4).i32_mul(),
    4,
    () => {
      f.get(X).get(offset).i32_add().f32_load().set(square);
      f.get(sum).get(square).get(square).f32_mul().f32_add().set(sum);
    },
  );
  f.get(OUT).get(sum).f32_store();
  return { name: 'sumSquares', body: f };
}
