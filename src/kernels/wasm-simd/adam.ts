/**
 * One Adam / AdamW update in WebAssembly SIMD (src/train/adam-update.ts's formulas and operation
 * order, so each float32 result is the one its tfjs-ops form gives):
 *
 *   adam(p, g, m, v, outP, outM, outV, n, lr, b1, oneMinusB1, b2, oneMinusB2, eps, bc1, bc2, l2, decay, gradScale)
 *
 *   g' = g·gradScale + p·l2            (l2 = wd for Adam's L2 penalty, else 0)
 *   m' = m·b1 + g'·(1 − b1);   v' = v·b2 + g'²·(1 − b2)
 *   p' = p·decay − ((m'/bc1) / (sqrt(v'/bc2) + eps))·lr     (decay = 1 − lr·wd for AdamW, else 1)
 *
 * writing m', v' and p' in one pass: an update reads four floats and writes three per parameter, and
 * memory is its cost (one pass per output read the four three times: a micro-model train step's updates
 * took 9.7 ms that way, 5.9 ms in one pass, tf.profile). Four
 * floats per instruction, then a scalar loop over the last n mod 4. Replaces about fifteen tfjs ops per
 * variable, each a pass over it.
 */
import { forRange, FunctionBody, type ExportedFunction } from './assembler.ts';

const POINTERS = ['p', 'g', 'm', 'v', 'outP', 'outM', 'outV'] as const;
const SCALARS = [
  'lr',
  'b1',
  'oneMinusB1',
  'b2',
  'oneMinusB2',
  'eps',
  'bc1',
  'bc2',
  'l2',
  'decay',
  'gradScale',
] as const;
type Scalar = (typeof SCALARS)[number];
const PARAM = {
  ...Object.fromEntries(POINTERS.map((name, i) => [name, i])),
  n: POINTERS.length,
  ...Object.fromEntries(SCALARS.map((name, i) => [name, POINTERS.length + 1 + i])),
} as Record<(typeof POINTERS)[number] | Scalar | 'n', number>;

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

/** Stores m', v' and p' of the element at byte offset `offset` of every array. */
function emitUpdate(f: FunctionBody, L: Lanes, offset: number, temps: { g: number; m: number; v: number }): void {
  const load = (array: 'p' | 'g' | 'm' | 'v') => {
    f.get(PARAM[array]).get(offset).i32_add();
    L.load(f);
  };
  const storeTo = (array: 'outP' | 'outM' | 'outV', value: () => void) => {
    f.get(PARAM[array]).get(offset).i32_add();
    value();
    L.store(f);
  };
  load('g'); L.scalar(f, 'gradScale'); L.mul(f);
  load('p'); L.scalar(f, 'l2'); L.mul(f); L.add(f);
  f.set(temps.g);
  load('m'); L.scalar(f, 'b1'); L.mul(f);
  f.get(temps.g); L.scalar(f, 'oneMinusB1'); L.mul(f); L.add(f);
  f.set(temps.m);
  load('v'); L.scalar(f, 'b2'); L.mul(f);
  f.get(temps.g).get(temps.g); L.mul(f); L.scalar(f, 'oneMinusB2'); L.mul(f); L.add(f);
  f.set(temps.v);
  storeTo('outM', () => f.get(temps.m));
  storeTo('outV', () => f.get(temps.v));
  storeTo('outP', () => {
    load('p'); L.scalar(f, 'decay'); L.mul(f);
    f.get(temps.m); L.scalar(f, 'bc1'); L.div(f);
    f.get(temps.v); L.scalar(f, 'bc2'); L.div(f); L.sqrt(f); L.scalar(f, 'eps'); L.add(f);
    L.div(f); L.scalar(f, 'lr'); L.mul(f); L.sub(f);
  });
} // prettier-ignore

/** The update from byte `offset` (where it stands) up to `to`, `L.bytes` at a time. */
function emitLoop(
  f: FunctionBody,
  L: Lanes,
  offset: number,
  to: number,
  temps: { g: number; m: number; v: number },
): void {
  forRange(
    f,
    offset,
    () => f.get(offset),
    () => f.get(to),
    L.bytes,
    () => emitUpdate(f, L, offset, temps),
  );
}

export function adamFunction(): ExportedFunction {
  const f = new FunctionBody([...POINTERS.map(() => 'i32' as const), 'i32', ...SCALARS.map(() => 'f32' as const)]);
  const splatted = Object.fromEntries(SCALARS.map((name) => [name, f.local('v128')])) as Record<Scalar, number>;
  for (const name of SCALARS) f.get(PARAM[name]).f32x4_splat().set(splatted[name]);
  const [offset, vectorEnd, end] = [f.local('i32'), f.local('i32'), f.local('i32')];
  const vectorTemps = { g: f.local('v128'), m: f.local('v128'), v: f.local('v128') };
  const scalarTemps = { g: f.local('f32'), m: f.local('f32'), v: f.local('f32') };
  f.get(PARAM.n).i32_const(4).i32_mul().set(end);
  f.get(PARAM.n).get(PARAM.n).i32_const(4).i32_rem_u().i32_sub().i32_const(4).i32_mul().set(vectorEnd);
  f.i32_const(0).set(offset);
  emitLoop(f, simdLanes(splatted), offset, vectorEnd, vectorTemps);
  emitLoop(f, scalarLanes, offset, end, scalarTemps);
  return { name: 'adam', body: f };
}
