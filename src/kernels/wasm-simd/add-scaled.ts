/**
 * y += scale·x in WebAssembly SIMD over n floats (the last n mod 4 one at a time):
 *
 *   addScaled(y, x, n, scale)
 *
 * Each element rounds scale·x to float32 and then the sum, as tfjs's mul then add do (and as the JS loop it
 * replaces in the decoding step did: a float32 sum computed in double rounds the same). The decoding step
 * adds every LoRA projection's scaled adapter output and both residuals this way; as a JS loop that was
 * about 6% of a batch-32 step of spindle-base.
 */
import { forRange, FunctionBody, type ExportedFunction } from './assembler.ts';

const [Y, X, N, SCALE] = [0, 1, 2, 3];

export function addScaledFunction(): ExportedFunction {
  const f = new FunctionBody(['i32', 'i32', 'i32', 'f32']);
  const offset = f.local('i32');
  const scale = f.local('v128');
  f.get(SCALE).f32x4_splat().set(scale);
  const wholeVectorBytes = () => f.get(N).get(N).i32_const(4).i32_rem_u().i32_sub().i32_const(4).i32_mul();
  forRange(
    f,
    offset,
    () => f.i32_const(0),
    wholeVectorBytes,
    16,
    () => {
      f.get(Y).get(offset).i32_add(); // the store's address
      f.get(Y).get(offset).i32_add().v128_load();
      f.get(X).get(offset).i32_add().v128_load();
      f.get(scale).f32x4_mul();
      f.f32x4_add();
      f.v128_store();
    },
  );
  forRange(
    f,
    offset,
    wholeVectorBytes,
    () => f.get(N).i32_const(4).i32_mul(),
    4,
    () => {
      f.get(Y).get(offset).i32_add();
      f.get(Y).get(offset).i32_add().f32_load();
      f.get(X).get(offset).i32_add().f32_load();
      f.get(SCALE).f32_mul();
      f.f32_add();
      f.f32_store();
    },
  );
  return { name: 'addScaled', body: f };
}
