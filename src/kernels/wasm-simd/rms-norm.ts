/**
 * RMSNorm's four kernels in WebAssembly SIMD (fused.ts names them; wasm-fused.ts registers them),
 * over rows of `cols` floats with cols a multiple of 4 (the caller checks):
 *
 *   rmsNorm(x, w, out, rows, cols, eps)           out = x·r·w,  r = 1/sqrt(mean(x²) + eps) per row
 *   rmsNormFactor(x, out, rows, cols, eps)        out[row] = r
 *   rmsNormDx(dy, x, w, out, rows, cols, eps)     out = r·w·dy − r³·x·Σ(w·dy·x)/cols
 *   rmsNormDw(dy, x, out, rows, cols, eps)        out[c] += Σ_rows dy·(x·r)   (the weight's gradient; out starts at 0)
 *
 * They replace JS loops over the heap that ran at 3–9 ns an element: JS widens every float32 to a
 * double and has no SIMD, while these read and write four floats per instruction.
 */
import { emitLaneReduce, forRange, FunctionBody, type ExportedFunction, type ValueType } from './assembler.ts';

/** Locals of one row's pass: its start, a running pointer and its end, a vector accumulator. */
interface RowLocals {
  row: number;
  base: number;
  p: number;
  end: number;
  acc: number;
  r: number;
  rv: number;
}

/** A function over `rows` rows of `cols` floats; `body(v)` runs once per row with `base` at the row's byte offset. */
function rowFunction(
  name: string,
  params: ValueType[],
  rowsParam: number,
  colsParam: number,
  body: (f: FunctionBody, v: RowLocals) => void,
): ExportedFunction {
  const f = new FunctionBody(params);
  const v: RowLocals = {
    row: f.local('i32'),
    base: f.local('i32'),
    p: f.local('i32'),
    end: f.local('i32'),
    acc: f.local('v128'),
    r: f.local('f32'),
    rv: f.local('v128'),
  };
  forRange(
    f,
    v.row,
    () => f.i32_const(0),
    () => f.get(rowsParam),
    1,
    () => {
      f.get(v.row).get(colsParam).i32_mul().i32_const(4).i32_mul().set(v.base);
      body(f, v);
    },
  );
  return { name, body: f };
}

/** Loops `p` over one row of `array` (a pointer parameter) four floats at a time; `step()` emits the work at p. */
function emitRowLoop(f: FunctionBody, v: RowLocals, array: number, cols: number, step: () => void): void {
  f.get(array).get(v.base).i32_add().tee(v.p).get(cols).i32_const(4).i32_mul().i32_add().set(v.end);
  f.loop();
  step();
  f.get(v.p).i32_const(16).i32_add().tee(v.p).get(v.end).i32_lt_u().br_if(0);
  f.end();
}

/** r = 1/sqrt(Σx²/cols + eps) of the row, into v.r (and splatted into v.rv). */
function emitRowFactor(f: FunctionBody, v: RowLocals, x: number, cols: number, eps: number): void {
  f.v128_const0().set(v.acc);
  emitRowLoop(f, v, x, cols, () => {
    f.get(v.acc).get(v.p).v128_load(0).get(v.p).v128_load(0).f32x4_mul().f32x4_add().set(v.acc);
  });
  f.f32_const(1);
  emitLaneReduce(f, v.acc, () => f.f32_add());
  f.get(cols).f32_convert_i32_u().f32_div().get(eps).f32_add().f32_sqrt().f32_div().set(v.r);
  f.get(v.r).f32x4_splat().set(v.rv);
}

/** The byte offset of p within the row being read, applied to another array: array + (p − rowStart(x)). */
function at(f: FunctionBody, v: RowLocals, array: number, x: number): void {
  f.get(array).get(v.p).i32_add().get(x).i32_sub();
}

export function rmsNormFunctions(): ExportedFunction[] {
  // rmsNorm(x, w, out, rows, cols, eps): out = (x·r)·w
  const forward = rowFunction('rmsNorm', ['i32', 'i32', 'i32', 'i32', 'i32', 'f32'], 3, 4, (f, v) => {
    const [x, w, out, cols, eps] = [0, 1, 2, 4, 5];
    emitRowFactor(f, v, x, cols, eps);
    emitRowLoop(f, v, x, cols, () => {
      at(f, v, out, x);
      f.get(v.p).v128_load(0).get(v.rv).f32x4_mul();
      f.get(w).get(v.p).i32_add().get(x).i32_sub().get(v.base).i32_sub().v128_load(0).f32x4_mul(); // w[c]: the column's offset within the row
      f.v128_store(0);
    });
  });
  // rmsNormFactor(x, out, rows, cols, eps): out[row] = r
  const factor = rowFunction('rmsNormFactor', ['i32', 'i32', 'i32', 'i32', 'f32'], 2, 3, (f, v) => {
    const [x, out, cols, eps] = [0, 1, 3, 4];
    emitRowFactor(f, v, x, cols, eps);
    f.get(out).get(v.row).i32_const(4).i32_mul().i32_add().get(v.r).f32_store(0);
  });
  // rmsNormDx(dy, x, w, out, rows, cols, eps): out = (r·w)·dy − (r³·Σ(w·dy·x)/cols)·x
  const dx = rowFunction('rmsNormDx', ['i32', 'i32', 'i32', 'i32', 'i32', 'i32', 'f32'], 4, 5, (f, v) => {
    const [dy, x, w, out, cols, eps] = [0, 1, 2, 3, 5, 6];
    const weightAt = () => f.get(w).get(v.p).i32_add().get(x).i32_sub().get(v.base).i32_sub().v128_load(0);
    emitRowFactor(f, v, x, cols, eps);
    const k = f.local('v128');
    f.v128_const0().set(v.acc);
    emitRowLoop(f, v, x, cols, () => {
      f.get(v.acc);
      weightAt();
      at(f, v, dy, x);
      f.v128_load(0).f32x4_mul().get(v.p).v128_load(0).f32x4_mul().f32x4_add().set(v.acc);
    });
    f.get(v.r).get(v.r).f32_mul().get(v.r).f32_mul();
    emitLaneReduce(f, v.acc, () => f.f32_add());
    f.f32_mul().get(cols).f32_convert_i32_u().f32_div().f32x4_splat().set(k);
    emitRowLoop(f, v, x, cols, () => {
      at(f, v, out, x);
      f.get(v.rv);
      weightAt();
      f.f32x4_mul();
      at(f, v, dy, x);
      f.v128_load(0).f32x4_mul();
      f.get(k).get(v.p).v128_load(0).f32x4_mul().f32x4_sub();
      f.v128_store(0);
    });
  });
  // rmsNormDw(dy, x, out, rows, cols, eps): out[c] += dy·(x·r), row after row (as ops it was two multiplies and a sum)
  const dw = rowFunction('rmsNormDw', ['i32', 'i32', 'i32', 'i32', 'i32', 'f32'], 3, 4, (f, v) => {
    const [dy, x, out, cols, eps] = [0, 1, 2, 4, 5];
    const column = () => f.get(out).get(v.p).i32_add().get(x).i32_sub().get(v.base).i32_sub(); // out[c]: the column's offset within the row
    emitRowFactor(f, v, x, cols, eps);
    emitRowLoop(f, v, x, cols, () => {
      column();
      column();
      f.v128_load(0);
      at(f, v, dy, x);
      f.v128_load(0).get(v.p).v128_load(0).get(v.rv).f32x4_mul().f32x4_mul().f32x4_add();
      f.v128_store(0);
    });
  });
  return [forward, factor, dx, dw];
}
