/**
 * One Adam / AdamW update in WebAssembly SIMD (src/train/adam-update.ts's formulas and operation
 * order, so each float32 result is the one its tfjs-ops form gives):
 *
 *   adam(p, g, m, v, out, n, part, lr, b1, oneMinusB1, b2, oneMinusB2, eps, bc1, bc2, l2, decay, gradScale)
 *
 *   g' = g·gradScale + p·l2            (l2 = wd for Adam's L2 penalty, else 0)
 *   m' = m·b1 + g'·(1 − b1);   v' = v·b2 + g'²·(1 − b2)
 *   p' = p·decay − ((m'/bc1) / (sqrt(v'/bc2) + eps))·lr     (decay = 1 − lr·wd for AdamW, else 1)
 *
 * `part` 0, 1 or 2 writes m', v' or p' to `out` (the kernel interface the WebGPU one has too: one
 * output per call). Four floats per instruction, then a scalar loop over the last n mod 4.
 * Replaces about fifteen tfjs ops per variable, each a pass over it.
 */
import { forRange, FunctionBody, type ExportedFunction } from './assembler.ts';

const POINTERS = ['p', 'g', 'm', 'v', 'out'] as const;
const SCALARS = ['lr', 'b1', 'oneMinusB1', 'b2', 'oneMinusB2', 'eps', 'bc1', 'bc2', 'l2', 'decay', 'gradScale'] as const;
type Scalar = (typeof SCALARS)[number];
const PARAM = {
  ...Object.fromEntries(POINTERS.map((name, i) => [name, i])),
  n: POINTERS.length,
  part: POINTERS.length + 1,
  ...Object.fromEntries(SCALARS.map((name, i) => [name, POINTERS.length + 2 + i])),
} as Record<(typeof POINTERS)[number] | Scalar | 'n' | 'part', number>;

/** The arithmetic of one lane width: f32x4 over v128 locals, or f32 over the scalar parameters. */
interface Lanes {
  bytes: number;
  type: 'v128' | 'f32';
  load(f: FunctionBody): void;
  store(f: FunctionBody): void;
  mul(f: FunctionBody): void;
  add(f: FunctionBody): void;
  sub(f: FunctionBody): void;
  div(f: FunctionBody): void;
  sqrt(f: FunctionBody): void;
  /** Pushes hyper-parameter `name` at this width. */
  scalar(f: FunctionBody, name: Scalar): void;
}

function simdLanes(splatted: Record<Scalar, number>): Lanes {
  return {
    bytes: 16,
    type: 'v128',
    load: (f) => f.v128_load(0),
    store: (f) => f.v128_store(0),
    mul: (f) => f.f32x4_mul(),
    add: (f) => f.f32x4_add(),
    sub: (f) => f.f32x4_sub(),
    div: (f) => f.f32x4_div(),
    sqrt: (f) => f.f32x4_sqrt(),
    scalar: (f, name) => f.get(splatted[name]),
  };
}

const scalarLanes: Lanes = {
  bytes: 4,
  type: 'f32',
  load: (f) => f.f32_load(0),
  store: (f) => f.f32_store(0),
  mul: (f) => f.f32_mul(),
  add: (f) => f.f32_add(),
  sub: (f) => f.f32_sub(),
  div: (f) => f.f32_div(),
  sqrt: (f) => f.f32_sqrt(),
  scalar: (f, name) => f.get(PARAM[name]),
};

/** Pushes `part`'s value for the element at byte offset `offset` of every array. */
function emitUpdate(f: FunctionBody, L: Lanes, offset: number, part: 0 | 1 | 2, temps: { g: number; m: number; v: number }): void {
  const load = (array: 'p' | 'g' | 'm' | 'v') => {
    f.get(PARAM[array]).get(offset).i32_add();
    L.load(f);
  };
  load('g'); L.scalar(f, 'gradScale'); L.mul(f);
  load('p'); L.scalar(f, 'l2'); L.mul(f); L.add(f);
  f.set(temps.g);
  if (part !== 1) {
    load('m'); L.scalar(f, 'b1'); L.mul(f);
    f.get(temps.g); L.scalar(f, 'oneMinusB1'); L.mul(f); L.add(f);
    f.set(temps.m);
  }
  if (part !== 0) {
    load('v'); L.scalar(f, 'b2'); L.mul(f);
    f.get(temps.g).get(temps.g); L.mul(f); L.scalar(f, 'oneMinusB2'); L.mul(f); L.add(f);
    f.set(temps.v);
  }
  if (part !== 2) {
    f.get(part === 0 ? temps.m : temps.v);
    return;
  }
  load('p'); L.scalar(f, 'decay'); L.mul(f);
  f.get(temps.m); L.scalar(f, 'bc1'); L.div(f);
  f.get(temps.v); L.scalar(f, 'bc2'); L.div(f); L.sqrt(f); L.scalar(f, 'eps'); L.add(f);
  L.div(f); L.scalar(f, 'lr'); L.mul(f); L.sub(f);
} // prettier-ignore

/** out = part's value from byte `offset` (where it stands) up to `to`, `L.bytes` at a time. */
function emitLoop(f: FunctionBody, L: Lanes, offset: number, to: number, part: 0 | 1 | 2, temps: { g: number; m: number; v: number }): void {
  forRange(f, offset, () => f.get(offset), () => f.get(to), L.bytes, () => {
    f.get(PARAM.out).get(offset).i32_add();
    emitUpdate(f, L, offset, part, temps);
    L.store(f);
  });
}

export function adamFunction(): ExportedFunction {
  const f = new FunctionBody([...POINTERS.map(() => 'i32' as const), 'i32', 'i32', ...SCALARS.map(() => 'f32' as const)]);
  const splatted = Object.fromEntries(SCALARS.map((name) => [name, f.local('v128')])) as Record<Scalar, number>;
  for (const name of SCALARS) f.get(PARAM[name]).f32x4_splat().set(splatted[name]);
  const [offset, vectorEnd, end] = [f.local('i32'), f.local('i32'), f.local('i32')];
  const vectorTemps = { g: f.local('v128'), m: f.local('v128'), v: f.local('v128') };
  const scalarTemps = { g: f.local('f32'), m: f.local('f32'), v: f.local('f32') };
  f.get(PARAM.n).i32_const(4).i32_mul().set(end);
  f.get(PARAM.n).get(PARAM.n).i32_const(4).i32_rem_u().i32_sub().i32_const(4).i32_mul().set(vectorEnd);
  // Dispatch on part once: blocks $m, $v, $p; br_table [0 → $m, 1 → $v, else → $p].
  f.block().block().block();
  f.get(PARAM.part).br_table([0, 1], 2);
  f.end();
  for (const part of [0, 1, 2] as const) {
    f.i32_const(0).set(offset);
    emitLoop(f, simdLanes(splatted), offset, vectorEnd, part, vectorTemps);
    emitLoop(f, scalarLanes, offset, end, part, scalarTemps);
    if (part < 2) f.return_().end();
  }
  return { name: 'adam', body: f };
}
