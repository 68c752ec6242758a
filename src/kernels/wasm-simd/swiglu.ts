/**
 * SwiGLU's product and its two gradients in WebAssembly SIMD (fused.ts's SWIGLU_KERNEL), over n floats
 * with n a multiple of 4 (the caller checks):
 *
 *   swiglu(gate, up, out, n)                out = gate·s·up,                 s = sigmoid(gate) = 1/(1 + exp(−gate))
 *   swigluGradUp(gate, dy, out, n)          out = dy·gate·s                  (∂/∂up)
 *   swigluGradGate(gate, up, dy, out, n)    out = dy·up·s·(1 + gate·(1 − s)) (∂/∂gate)
 *
 * with exp.ts's exp: the JS loops they replace spent 15–30 ns an element in Math.exp, and as tfjs's ops a
 * training step ran the product as three passes and its gradients as about eight.
 */
import { forRange, FunctionBody, type ExportedFunction } from './assembler.ts';
import { emitExp, expLocals } from './exp.ts';

const [GATE, UP, OUT, N] = [0, 1, 2, 3];

/** Pushes sigmoid(g) of the vector in local `g` (e's locals are overwritten). */
function emitSigmoid(f: FunctionBody, g: number, e: ReturnType<typeof expLocals>): void {
  f.v128_const0().get(g).f32x4_sub().set(e.x); // 0 − g
  f.f32x4_const(1);
  f.f32x4_const(1);
  emitExp(f, e);
  f.f32x4_add().f32x4_div(); // 1 / (1 + exp(−g))
}

export function swigluFunction(): ExportedFunction {
  const f = new FunctionBody(['i32', 'i32', 'i32', 'i32']);
  const offset = f.local('i32');
  const g = f.local('v128');
  const e = expLocals(f);
  forRange(
    f,
    offset,
    () => f.i32_const(0),
    () => f.get(N).i32_const(4).i32_mul(),
    16,
    () => {
      f.get(GATE).get(offset).i32_add().v128_load().set(g);
      f.get(OUT).get(offset).i32_add(); // the store's address
      f.get(g);
      emitSigmoid(f, g, e);
      f.f32x4_mul(); // g·sigmoid
      f.get(UP).get(offset).i32_add().v128_load().f32x4_mul();
      f.v128_store();
    },
  );
  return { name: 'swiglu', body: f };
}

export function swigluGradUpFunction(): ExportedFunction {
  const [GATE_, DY, OUT_, N_] = [0, 1, 2, 3];
  const f = new FunctionBody(['i32', 'i32', 'i32', 'i32']);
  const offset = f.local('i32');
  const g = f.local('v128');
  const e = expLocals(f);
  forRange(
    f,
    offset,
    () => f.i32_const(0),
    () => f.get(N_).i32_const(4).i32_mul(),
    16,
    () => {
      f.get(GATE_).get(offset).i32_add().v128_load().set(g);
      f.get(OUT_).get(offset).i32_add();
      f.get(DY).get(offset).i32_add().v128_load().get(g).f32x4_mul(); // dy·g
      emitSigmoid(f, g, e);
      f.f32x4_mul();
      f.v128_store();
    },
  );
  return { name: 'swigluGradUp', body: f };
}

export function swigluGradGateFunction(): ExportedFunction {
  const [GATE_, UP_, DY, OUT_, N_] = [0, 1, 2, 3, 4];
  const f = new FunctionBody(['i32', 'i32', 'i32', 'i32', 'i32']);
  const offset = f.local('i32');
  const [g, s] = [f.local('v128'), f.local('v128')];
  const e = expLocals(f);
  forRange(
    f,
    offset,
    () => f.i32_const(0),
    () => f.get(N_).i32_const(4).i32_mul(),
    16,
    () => {
      f.get(GATE_).get(offset).i32_add().v128_load().set(g);
      emitSigmoid(f, g, e);
      f.set(s);
      f.get(OUT_).get(offset).i32_add();
      f.get(DY)
        .get(offset)
        .i32_add()
        .v128_load()
        .get(UP_)
        .get(offset)
        .i32_add()
        .v128_load()
        .f32x4_mul()
        .get(s)
        .f32x4_mul(); // dy·up·s
      f.f32x4_const(1).get(g).f32x4_const(1).get(s).f32x4_sub().f32x4_mul().f32x4_add(); // 1 + g·(1 − s)
      f.f32x4_mul();
      f.v128_store();
    },
  );
  return { name: 'swigluGradGate', body: f };
}
