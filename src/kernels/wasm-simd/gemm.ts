/**
 * A single-precision matrix product in WebAssembly SIMD, emitted with assembler.ts (module.ts puts it
 * in a module over tfjs-wasm's heap):
 *
 *   gemm(a, b, c, scratch, m, k, n, aRow, aCol, bRow, bCol, cRow)      C[m, n] = A'[m, k] · B'[k, n]
 *
 * A'(i, p) is the f32 at byte address a + i·aRow + p·aCol and B'(p, j) the one at b + p·bRow + j·bCol,
 * so one kernel takes either operand transposed (the gradients' g·Wᵀ and xᵀ·g) by its strides alone,
 * with no transposed copy. C(i, j) is written at c + i·cRow + 4j: cRow is 4n for a whole product, wider
 * for a band of columns of a larger C (a thread's share). `scratch` holds gemmScratchFloats(m, k).
 *
 * How it is fast (a small transformer's products are a few hundred wide, so the matrices sit in cache
 * and the instructions per multiply-add are the cost):
 * - Packing. A' is copied once into panels of ROWS rows interleaved ([k][ROWS] per block of rows), and
 *   B' 8 columns at a time into a [k][8] panel. The inner loop then reads both with fixed offsets from two pointers, whatever the operands' layouts.
 * - A register-blocked micro-kernel keeps a ROWS × 8 block of C in ROWS·2 SIMD registers over the
 *   whole of k. Per step of k it loads the B panel's two vectors, broadcasts each row's A' value
 *   (v128.load32_splat, a load with an immediate offset) and multiplies and adds ROWS·2 times. With
 *   relaxed SIMD the multiply and add are one f32x4.relaxed_madd.
 * - Rows past the last whole block take a one-row kernel reading A' in place; columns past the last
 *   whole strip of 8 (e.g. a 266-token vocabulary's last 2) take a scalar loop.
 * k must be at least 1 (the caller writes zeros when k is 0).
 *
 * Every C(i, j) is one sum over p in order, from zero, with the same multiply-add whichever path
 * computes it (a whole block or the one-row kernel), and only j decides whether it is a SIMD strip or the
 * scalar tail: so a product split into bands of rows, or of columns at multiples of 8, gives the same
 * bits as the whole (kernel-threads.ts relies on it).
 *
 *   gemmPacked(a, b, c, scratch, m, k, n, aRow, aCol, bRow, bCol, cRow, packed)
 *   packStrips(b, packed, k, n)
 *
 * A weight that is multiplied many times (a decoding step's, every token) is packed once by packStrips,
 * its whole strips of 8 columns as [k][8] panels one after another, and gemmPacked reads those panels
 * where gemm would pack them (the columns past the last whole strip still come from b in place).
 */
import { forRange, FunctionBody, type ExportedFunction } from './assembler.ts';

/** Rows of C per micro-kernel block: ROWS·2 accumulators + 2 panel vectors + 1 broadcast fit x64's 16 SIMD registers. */
export const GEMM_ROWS = 4;
/** Columns per panel strip: two f32x4 vectors. */
const STRIP = 8;

/** Floats of scratch a product needs: A' packed in whole row blocks, and one B' strip. */
export function gemmScratchFloats(m: number, k: number): number {
  return (m - (m % GEMM_ROWS)) * k + STRIP * k;
}

const PARAMS = ['a', 'b', 'c', 'scratch', 'm', 'k', 'n', 'aRow', 'aCol', 'bRow', 'bCol', 'cRow', 'packed'] as const;
const P = Object.fromEntries(PARAMS.map((p, i) => [p, i])) as Record<(typeof PARAMS)[number], number>;

/** Locals shared by the function's parts. */
interface Locals {
  fullRows: number;
  fullCols: number;
  bPanel: number;
  i0: number;
  j0: number;
  /** Loop pointers: source, destination, end, and a counter. */
  src: number;
  dst: number;
  end: number;
  p: number;
  pa: number;
  pb: number;
  out: number;
  /** r·aRow, r·cRow and j·bCol for the unrolled rows and columns. */
  aRowOffsets: number[];
  cRowOffsets: number[];
  bColOffsets: number[];
  b0: number;
  b1: number;
  av: number;
  acc: number[];
  sum: number;
}

/** An address from a base pointer and an offset local (0 means none): pushes base + offset. */
function address(f: FunctionBody, base: number, offsetLocal: number): void {
  f.get(base);
  if (offsetLocal) f.get(offsetLocal).i32_add();
}

/**
 * Packs A' rows into blocks of ROWS: block ib holds [k][ROWS] with A'(ib·ROWS + r, p) at
 * (ib·k + p)·ROWS + r.
 */
function emitPackA(f: FunctionBody, v: Locals): void {
  f.get(P.scratch).set(v.dst);
  forRange(
    f,
    v.i0,
    () => f.i32_const(0),
    () => f.get(v.fullRows),
    GEMM_ROWS,
    () => {
      f.get(P.a).get(v.i0).get(P.aRow).i32_mul().i32_add().set(v.src);
      f.get(v.dst)
        .get(P.k)
        .i32_const(GEMM_ROWS * 4)
        .i32_mul()
        .i32_add()
        .set(v.end);
      f.loop();
      for (let r = 0; r < GEMM_ROWS; r++) {
        f.get(v.dst);
        address(f, v.src, v.aRowOffsets[r]);
        f.f32_load(0).f32_store(r * 4);
      }
      f.get(v.src).get(P.aCol).i32_add().set(v.src);
      f.get(v.dst)
        .i32_const(GEMM_ROWS * 4)
        .i32_add()
        .tee(v.dst)
        .get(v.end)
        .i32_lt_u()
        .br_if(0);
      f.end();
    },
  );
}

/** Copies B' columns j0 … j0+7 into the B panel as [k][8]: two vector copies per row when B' columns are contiguous, a gather otherwise. */
function emitPackB(f: FunctionBody, v: Locals): void {
  f.get(P.b).get(v.j0).get(P.bCol).i32_mul().i32_add().set(v.src);
  f.get(v.bPanel)
    .tee(v.dst)
    .get(P.k)
    .i32_const(STRIP * 4)
    .i32_mul()
    .i32_add()
    .set(v.end);
  const advance = () => {
    f.get(v.src).get(P.bRow).i32_add().set(v.src);
    f.get(v.dst)
      .i32_const(STRIP * 4)
      .i32_add()
      .tee(v.dst)
      .get(v.end)
      .i32_lt_u()
      .br_if(0);
  };
  f.block();
  f.block();
  f.get(P.bCol).i32_const(4).i32_sub().br_if(0); // columns not contiguous: gather
  f.loop();
  f.get(v.dst).get(v.src).v128_load(0).v128_store(0);
  f.get(v.dst).get(v.src).v128_load(16).v128_store(16);
  advance();
  f.end();
  f.br(1);
  f.end();
  f.loop();
  for (let j = 0; j < STRIP; j++) {
    f.get(v.dst);
    address(f, v.src, v.bColOffsets[j]);
    f.f32_load(0).f32_store(j * 4);
  }
  advance();
  f.end();
  f.end();
}

/** acc += av · b, as one relaxed multiply-add or a multiply and an add. */
function emitMultiplyAdd(f: FunctionBody, acc: number, av: number, b: number, fma: boolean): void {
  if (fma) f.get(av).get(b).get(acc).f32x4_relaxed_madd().set(acc);
  else f.get(acc).get(av).get(b).f32x4_mul().f32x4_add().set(acc);
}

/** Stores the accumulators of `rows` rows at C[i0, j0 …]. */
function emitStoreBlock(f: FunctionBody, v: Locals, rows: number): void {
  f.get(P.c).get(v.i0).get(P.cRow).i32_mul().i32_add().get(v.j0).i32_const(4).i32_mul().i32_add().set(v.out);
  for (let r = 0; r < rows; r++) {
    for (let half = 0; half < 2; half++) {
      address(f, v.out, v.cRowOffsets[r]);
      f.get(v.acc[2 * r + half]).v128_store(half * 16);
    }
  }
}

/**
 * C[i0 … i0+ROWS-1, j0 … j0+7] from block i0/ROWS of the packed A' and the B panel, one step of k per
 * turn: unrolling further made V8 hoist every load of the turn and spill accumulators to the stack
 * (x64 has 16 SIMD registers), a third slower.
 */
function emitBlockKernel(f: FunctionBody, v: Locals, fma: boolean): void {
  for (const acc of v.acc) f.v128_const0().set(acc);
  f.get(P.scratch).get(v.i0).get(P.k).i32_mul().i32_const(4).i32_mul().i32_add().set(v.pa);
  f.get(v.bPanel)
    .tee(v.pb)
    .get(P.k)
    .i32_const(STRIP * 4)
    .i32_mul()
    .i32_add()
    .set(v.end);
  f.loop();
  f.get(v.pb).v128_load(0).set(v.b0);
  f.get(v.pb).v128_load(16).set(v.b1);
  for (let r = 0; r < GEMM_ROWS; r++) {
    f.get(v.pa)
      .v128_load32_splat(r * 4)
      .set(v.av);
    emitMultiplyAdd(f, v.acc[2 * r], v.av, v.b0, fma);
    emitMultiplyAdd(f, v.acc[2 * r + 1], v.av, v.b1, fma);
  }
  f.get(v.pa)
    .i32_const(GEMM_ROWS * 4)
    .i32_add()
    .set(v.pa);
  f.get(v.pb)
    .i32_const(STRIP * 4)
    .i32_add()
    .tee(v.pb)
    .get(v.end)
    .i32_lt_u()
    .br_if(0);
  f.end();
  emitStoreBlock(f, v, GEMM_ROWS);
}

/** C[i0, j0 … j0+7] for a row past the last whole block, reading A' in place, one step of k per turn. */
function emitRowKernel(f: FunctionBody, v: Locals, fma: boolean): void {
  f.v128_const0().set(v.acc[0]);
  f.v128_const0().set(v.acc[1]);
  f.get(P.a).get(v.i0).get(P.aRow).i32_mul().i32_add().set(v.pa);
  f.get(v.bPanel)
    .tee(v.pb)
    .get(P.k)
    .i32_const(STRIP * 4)
    .i32_mul()
    .i32_add()
    .set(v.end);
  f.loop();
  f.get(v.pb).v128_load(0).set(v.b0);
  f.get(v.pb).v128_load(16).set(v.b1);
  f.get(v.pa).v128_load32_splat(0).set(v.av);
  emitMultiplyAdd(f, v.acc[0], v.av, v.b0, fma);
  emitMultiplyAdd(f, v.acc[1], v.av, v.b1, fma);
  f.get(v.pa).get(P.aCol).i32_add().set(v.pa);
  f.get(v.pb)
    .i32_const(STRIP * 4)
    .i32_add()
    .tee(v.pb)
    .get(v.end)
    .i32_lt_u()
    .br_if(0);
  f.end();
  emitStoreBlock(f, v, 1);
}

/** C[:, j0] for a column past the last whole strip: a scalar dot product per row. */
function emitColumnTail(f: FunctionBody, v: Locals): void {
  forRange(
    f,
    v.i0,
    () => f.i32_const(0),
    () => f.get(P.m),
    1,
    () => {
      f.f32_const(0).set(v.sum);
      f.get(P.a).get(v.i0).get(P.aRow).i32_mul().i32_add().set(v.pa);
      f.get(P.b).get(v.j0).get(P.bCol).i32_mul().i32_add().set(v.pb);
      f.i32_const(0).set(v.p);
      f.loop();
      f.get(v.sum).get(v.pa).f32_load(0).get(v.pb).f32_load(0).f32_mul().f32_add().set(v.sum);
      f.get(v.pa).get(P.aCol).i32_add().set(v.pa);
      f.get(v.pb).get(P.bRow).i32_add().set(v.pb);
      f.get(v.p).i32_const(1).i32_add().tee(v.p).get(P.k).i32_lt_u().br_if(0);
      f.end();
      f.get(P.c).get(v.i0).get(P.cRow).i32_mul().i32_add().get(v.j0).i32_const(4).i32_mul().i32_add();
      f.get(v.sum).f32_store(0);
    },
  );
}

function gemmBody(fma: boolean, prepacked: boolean): FunctionBody {
  const f = new FunctionBody((prepacked ? PARAMS : PARAMS.slice(0, -1)).map(() => 'i32' as const));
  const i32 = () => f.local('i32');
  const v128 = () => f.local('v128');
  const offsets = (count: number) => [0, ...Array.from({ length: count - 1 }, i32)];
  const v: Locals = {
    fullRows: i32(), fullCols: i32(), bPanel: i32(), i0: i32(), j0: i32(),
    src: i32(), dst: i32(), end: i32(), p: i32(), pa: i32(), pb: i32(), out: i32(),
    aRowOffsets: offsets(GEMM_ROWS), cRowOffsets: offsets(GEMM_ROWS), bColOffsets: offsets(STRIP),
    b0: v128(), b1: v128(), av: v128(), acc: Array.from({ length: GEMM_ROWS * 2 }, v128), sum: f.local('f32'),
  }; // prettier-ignore

  for (let r = 1; r < GEMM_ROWS; r++) {
    f.get(P.aRow).i32_const(r).i32_mul().set(v.aRowOffsets[r]);
    f.get(P.cRow).i32_const(r).i32_mul().set(v.cRowOffsets[r]);
  }
  for (let j = 1; j < STRIP; j++) f.get(P.bCol).i32_const(j).i32_mul().set(v.bColOffsets[j]);
  f.get(P.m).get(P.m).i32_const(GEMM_ROWS).i32_rem_u().i32_sub().set(v.fullRows);
  f.get(P.n).get(P.n).i32_const(STRIP).i32_rem_u().i32_sub().set(v.fullCols);
  // The B panel follows the packed A': scratch + fullRows·k floats.
  f.get(P.scratch).get(v.fullRows).get(P.k).i32_mul().i32_const(4).i32_mul().i32_add().set(v.bPanel);

  emitPackA(f, v);
  forRange(
    f,
    v.j0,
    () => f.i32_const(0),
    () => f.get(v.fullCols),
    STRIP,
    () => {
      if (prepacked)
        f.get(P.packed).get(v.j0).get(P.k).i32_mul().i32_const(4).i32_mul().i32_add().set(v.bPanel); // strip j0/8 of [k][8]
      else emitPackB(f, v);
      forRange(
        f,
        v.i0,
        () => f.i32_const(0),
        () => f.get(v.fullRows),
        GEMM_ROWS,
        () => emitBlockKernel(f, v, fma),
      );
      forRange(
        f,
        v.i0,
        () => f.get(v.fullRows),
        () => f.get(P.m),
        1,
        () => emitRowKernel(f, v, fma),
      );
    },
  );
  forRange(
    f,
    v.j0,
    () => f.get(v.fullCols),
    () => f.get(P.n),
    1,
    () => emitColumnTail(f, v),
  );
  return f;
}

/** The gemm functions, multiplying and adding with relaxed SIMD's f32x4.relaxed_madd when `fma`: packing B per call, and reading it packed. */
export function gemmFunctions(fma: boolean): ExportedFunction[] {
  return [
    { name: 'gemm', body: gemmBody(fma, false) },
    { name: 'gemmPacked', body: gemmBody(fma, true) },
    packStripsFunction(),
  ];
}

/** Floats of packStrips' output for a [k, n] matrix: its whole strips. */
export function packedStripsFloats(k: number, n: number): number {
  return (n - (n % STRIP)) * k;
}

/** packStrips(b, packed, k, n): b [k, n] row-major → its whole strips of 8 columns, each [k][8], in order. */
function packStripsFunction(): ExportedFunction {
  const f = new FunctionBody(['i32', 'i32', 'i32', 'i32']);
  const [B, PACKED, K, N] = [0, 1, 2, 3];
  const [j0, src, dst, end, rowBytes] = Array.from({ length: 5 }, () => f.local('i32'));
  f.get(N).i32_const(4).i32_mul().set(rowBytes);
  f.get(PACKED).set(dst);
  forRange(
    f,
    j0,
    () => f.i32_const(0),
    () => f.get(N).get(N).i32_const(STRIP).i32_rem_u().i32_sub(),
    STRIP,
    () => {
      f.get(B).get(j0).i32_const(4).i32_mul().i32_add().set(src);
      f.get(dst)
        .get(K)
        .i32_const(STRIP * 4)
        .i32_mul()
        .i32_add()
        .set(end);
      f.loop();
      f.get(dst).get(src).v128_load(0).v128_store(0);
      f.get(dst).get(src).v128_load(16).v128_store(16);
      f.get(src).get(rowBytes).i32_add().set(src);
      f.get(dst)
        .i32_const(STRIP * 4)
        .i32_add()
        .tee(dst)
        .get(end)
        .i32_lt_u()
        .br_if(0);
      f.end();
    },
  );
  return { name: 'packStrips', body: f };
}
