/**
 * A decoding step's attention in WebAssembly SIMD (heap-kernels.ts's attendOne runs the three in turn),
 * for the query heads that share one key/value head, over heads of D floats with D a multiple of 4:
 *
 *   attendScores(q, k, s, rows, keys, D, stride)      s[r, j] = q[r] · k[j]          q [rows, D], k [keys, D]
 *   softmaxRows(s, bias, rows, stride, scale, mask)    s[r] ← softmax(s[r]·scale + bias row of r) over `stride` lanes
 *   attendValues(p, v, out, rows, keys, D, stride)     out[r] = Σ_j p[r, j] · v[j]     p [rows, ≥ keys], v [keys, D]
 *   softmaxGradRows(dy, y, out, rows, stride, scale)   out[r] = y[r]·(dy[r] − Σ dy[r]·y[r])·scale: the
 *                                                      gradient of softmaxRows' input s, given y = its output
 *
 * The bias row of row r (counted from `first`, the mask's fields below) is at
 *   bias + ⌊(first + r) / groupRows⌋·groupBytes + ((first + r) mod period)·rowBytes:
 * a decoding step's rows share one (period 1, groupBytes 0); a prompt's row at position t reads the causal
 * mask's row t (period T), of its own batch row's mask where each has one (groupBytes).
 * Score rows are `stride` floats apart, stride a multiple of 4 ≥ keys; attendScores fills the lanes from
 * `keys` on with −∞, so the softmax runs on whole vectors and gives them (almost exactly: exp.ts) 0.
 * The products read the cache in place, in order: one query position makes these thin products (a few
 * rows against up to a few thousand keys), where the gemm's packing of kᵀ, a gather, was most of the time.
 */
import { emitLaneReduce, forRange, FunctionBody, type ExportedFunction } from './assembler.ts';
import { emitExp, expLocals } from './exp.ts';

const [A, B, OUT, ROWS, KEYS, D, STRIDE] = [0, 1, 2, 3, 4, 5, 6];
const PRODUCT_PARAMS = ['i32', 'i32', 'i32', 'i32', 'i32', 'i32', 'i32'] as const;

function scoresFunction(): ExportedFunction {
  const f = new FunctionBody(PRODUCT_PARAMS);
  const [r, j, pq, pk, end, po, rowBytes] = Array.from({ length: 7 }, () => f.local('i32'));
  const acc = f.local('v128');
  f.get(D).i32_const(4).i32_mul().set(rowBytes);
  forRange(
    f,
    r,
    () => f.i32_const(0),
    () => f.get(ROWS),
    1,
    () => {
      f.get(OUT).get(r).get(STRIDE).i32_mul().i32_const(4).i32_mul().i32_add().set(po);
      forRange(
        f,
        j,
        () => f.i32_const(0),
        () => f.get(KEYS),
        1,
        () => {
          f.v128_const0().set(acc);
          f.get(A).get(r).get(rowBytes).i32_mul().i32_add().set(pq);
          f.get(B).get(j).get(rowBytes).i32_mul().i32_add().tee(pk).get(rowBytes).i32_add().set(end);
          f.loop();
          f.get(acc).get(pq).v128_load().get(pk).v128_load().f32x4_mul().f32x4_add().set(acc);
          f.get(pq).i32_const(16).i32_add().set(pq);
          f.get(pk).i32_const(16).i32_add().tee(pk).get(end).i32_lt_u().br_if(0);
          f.end();
          f.get(po);
          emitLaneReduce(f, acc, () => f.f32_add());
          f.f32_store();
          f.get(po).i32_const(4).i32_add().set(po);
        },
      );
      // lanes past the last key: −∞, so the softmax gives them nothing
      forRange(
        f,
        j,
        () => f.get(KEYS),
        () => f.get(STRIDE),
        1,
        () => {
          f.get(po).f32_const(-Infinity).f32_store();
          f.get(po).i32_const(4).i32_add().set(po);
        },
      );
    },
  );
  return { name: 'attendScores', body: f };
}

function valuesFunction(): ExportedFunction {
  const f = new FunctionBody(PRODUCT_PARAMS);
  const [r, j, pv, po, end, rowBytes, pp] = Array.from({ length: 7 }, () => f.local('i32'));
  const weight = f.local('v128');
  f.get(D).i32_const(4).i32_mul().set(rowBytes);
  forRange(
    f,
    r,
    () => f.i32_const(0),
    () => f.get(ROWS),
    1,
    () => {
      f.get(A).get(r).get(STRIDE).i32_mul().i32_const(4).i32_mul().i32_add().set(pp);
      // out[r] = 0
      f.get(OUT).get(r).get(rowBytes).i32_mul().i32_add().tee(po).get(rowBytes).i32_add().set(end);
      f.loop();
      f.get(po).v128_const0().v128_store();
      f.get(po).i32_const(16).i32_add().tee(po).get(end).i32_lt_u().br_if(0);
      f.end();
      f.get(B).set(pv);
      forRange(
        f,
        j,
        () => f.i32_const(0),
        () => f.get(KEYS),
        1,
        () => {
          f.get(pp).v128_load32_splat().set(weight);
          f.get(OUT).get(r).get(rowBytes).i32_mul().i32_add().set(po);
          f.loop();
          f.get(po).get(po).v128_load().get(weight).get(pv).v128_load().f32x4_mul().f32x4_add().v128_store();
          f.get(pv).i32_const(16).i32_add().set(pv);
          f.get(po).i32_const(16).i32_add().tee(po).get(end).i32_lt_u().br_if(0);
          f.end();
          f.get(pp).i32_const(4).i32_add().set(pp);
        },
      );
    },
  );
  return { name: 'attendValues', body: f };
}

const [S, BIAS, SM_ROWS, SM_STRIDE, SCALE, FIRST, PERIOD, ROW_BYTES, GROUP_ROWS, GROUP_BYTES] = [
  0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
];

function softmaxFunction(): ExportedFunction {
  const f = new FunctionBody(['i32', 'i32', 'i32', 'i32', 'f32', 'i32', 'i32', 'i32', 'i32', 'i32']);
  const [r, p, pb, start, end, rowBias, row] = Array.from({ length: 7 }, () => f.local('i32'));
  const [scale, acc, shift] = [f.local('v128'), f.local('v128'), f.local('v128')];
  const e = expLocals(f);
  /** Runs `body` with p over the row's vectors (and pb over the bias's alongside). */
  const overRow = (body: () => void) => {
    f.get(start).set(p);
    f.get(rowBias).set(pb);
    f.loop();
    body();
    f.get(pb).i32_const(16).i32_add().set(pb);
    f.get(p).i32_const(16).i32_add().tee(p).get(end).i32_lt_u().br_if(0);
    f.end();
  };
  f.get(SCALE).f32x4_splat().set(scale);
  forRange(
    f,
    r,
    () => f.i32_const(0),
    () => f.get(SM_ROWS),
    1,
    () => {
      f.get(S)
        .get(r)
        .get(SM_STRIDE)
        .i32_mul()
        .i32_const(4)
        .i32_mul()
        .i32_add()
        .tee(start)
        .get(SM_STRIDE)
        .i32_const(4)
        .i32_mul()
        .i32_add()
        .set(end);
      f.get(FIRST).get(r).i32_add().set(row);
      f.get(BIAS).get(row).get(GROUP_ROWS).i32_div_u().get(GROUP_BYTES).i32_mul().i32_add();
      f.get(row).get(PERIOD).i32_rem_u().get(ROW_BYTES).i32_mul().i32_add().set(rowBias);
      // s·scale + bias, and the row's maximum
      f.f32x4_const(-Infinity).set(acc);
      overRow(() => {
        f.get(p).get(p).v128_load().get(scale).f32x4_mul().get(pb).v128_load().f32x4_add().tee(e.x).v128_store();
        f.get(acc).get(e.x).f32x4_pmax().set(acc); // scores are not NaN; pmax is one instruction
      });
      emitLaneReduce(f, acc, () => f.f32_max());
      f.f32x4_splat().set(shift);
      // exp(s − max), and the row's sum
      f.v128_const0().set(acc);
      overRow(() => {
        f.get(p).v128_load().get(shift).f32x4_sub().set(e.x);
        f.get(p);
        emitExp(f, e);
        f.tee(e.x).v128_store();
        f.get(acc).get(e.x).f32x4_add().set(acc);
      });
      emitLaneReduce(f, acc, () => f.f32_add());
      f.f32x4_splat().set(shift);
      overRow(() => {
        f.get(p).get(p).v128_load().get(shift).f32x4_div().v128_store();
      });
    },
  );
  return { name: 'softmaxRows', body: f };
}

const [G_DY, G_Y, G_OUT, G_ROWS, G_STRIDE, G_SCALE] = [0, 1, 2, 3, 4, 5];

function softmaxGradFunction(): ExportedFunction {
  const f = new FunctionBody(['i32', 'i32', 'i32', 'i32', 'i32', 'f32']);
  const [r, offset, rowBytes, base] = Array.from({ length: 4 }, () => f.local('i32'));
  const [acc, dot, scale] = [f.local('v128'), f.local('v128'), f.local('v128')];
  f.get(G_SCALE).f32x4_splat().set(scale);
  f.get(G_STRIDE).i32_const(4).i32_mul().set(rowBytes);
  forRange(
    f,
    r,
    () => f.i32_const(0),
    () => f.get(G_ROWS),
    1,
    () => {
      f.get(r).get(rowBytes).i32_mul().set(base);
      // Σ dy·y over the row
      f.v128_const0().set(acc);
      forRange(
        f,
        offset,
        () => f.get(base),
        () => f.get(base).get(rowBytes).i32_add(),
        16,
        () => {
          f.get(acc)
            .get(G_DY)
            .get(offset)
            .i32_add()
            .v128_load()
            .get(G_Y)
            .get(offset)
            .i32_add()
            .v128_load()
            .f32x4_mul()
            .f32x4_add()
            .set(acc);
        },
      );
      emitLaneReduce(f, acc, () => f.f32_add());
      f.f32x4_splat().set(dot);
      // y·(dy − Σ)·scale
      forRange(
        f,
        offset,
        () => f.get(base),
        () => f.get(base).get(rowBytes).i32_add(),
        16,
        () => {
          f.get(G_OUT).get(offset).i32_add();
          f.get(G_Y).get(offset).i32_add().v128_load();
          f.get(G_DY).get(offset).i32_add().v128_load().get(dot).f32x4_sub();
          f.f32x4_mul().get(scale).f32x4_mul().v128_store();
        },
      );
    },
  );
  return { name: 'softmaxGradRows', body: f };
}

export function attentionFunctions(): ExportedFunction[] {
  return [scoresFunction(), softmaxFunction(), valuesFunction(), softmaxGradFunction()];
}
