/**
 * How a kernel's work is shared between threads (kernel-threads.ts), fixed by the sizes and the thread
 * count alone: a product's bands of C's rows or of its columns, whole slices of a batch (or whole groups
 * of attention heads), runs of whole vectors of an elementwise kernel. gemm.ts computes every C(i, j) the
 * same way in any band of rows, or of columns cut at multiples of its 8-column strips, and an elementwise
 * kernel computes an element the same way wherever it lies, so the shares together give the bits one
 * thread gives.
 */
import { GEMM_ROWS } from './gemm.ts';

const STRIP = 8;

/** A gemm call's arguments (gemm.ts), `packed` only for gemmPacked. Addresses and strides in bytes. */
export interface GemmArgs {
  a: number;
  b: number;
  c: number;
  m: number;
  k: number;
  n: number;
  aRow: number;
  aCol: number;
  bRow: number;
  bCol: number;
  cRow: number;
  packed?: number;
}

/**
 * Multiply-adds a thread's share must reach for splitting to pay (about 50 µs on one core here): below it,
 * handing shares out and waiting for them cost more than they saved on this 2-core machine (batch-4 and
 * batch-16 decoding products of the micro preset ran slower split at a quarter of this).
 */
export const MIN_SHARE_WORK = 1 << 20;

/** Threads worth using for `work` multiply-adds, at most `threads`, each share at least `minShareWork`. */
export function partsFor(work: number, threads: number, minShareWork = MIN_SHARE_WORK): number {
  return Math.max(1, Math.min(threads, Math.floor(work / minShareWork)));
}

/** Cuts 0 … units into `parts` contiguous ranges as even as whole units allow. */
function cuts(units: number, parts: number): [number, number][] {
  const out: [number, number][] = []; // a plain loop: Array.from with a map was a tenth of recording a decoding step
  for (let i = 0; i < parts; i++) out.push([Math.floor((i * units) / parts), Math.floor(((i + 1) * units) / parts)]);
  return out;
}

/**
 * g with `changes`, written out field by field: an object spread here (of objects from several call
 * sites) took V8's slow path, about 10 µs a product, more than the product itself at a decoding step's sizes.
 */
export function band(g: GemmArgs, changes: Partial<GemmArgs>): GemmArgs {
  return {
    a: changes.a ?? g.a, b: changes.b ?? g.b, c: changes.c ?? g.c, m: changes.m ?? g.m, k: g.k, n: changes.n ?? g.n,
    aRow: g.aRow, aCol: g.aCol, bRow: g.bRow, bCol: g.bCol, cRow: g.cRow, packed: 'packed' in changes ? changes.packed : g.packed,
  }; // prettier-ignore
}

/**
 * The product cut into at most `threads` bands: of columns when C is wider than tall (each band then
 * repacks A, the smaller operand, and reads only its own columns of a packed weight), of rows otherwise
 * (each band repacks B's strips).
 */
export function splitProduct(g: GemmArgs, threads: number, minShareWork = MIN_SHARE_WORK): GemmArgs[] {
  const parts = partsFor(g.m * g.k * g.n, threads, minShareWork);
  const blocks = Math.ceil(g.m / GEMM_ROWS);
  const strips = Math.ceil(g.n / STRIP); // the scalar tail goes with the last strip
  if (g.m < g.n && strips >= 2) {
    return cuts(strips, Math.min(parts, strips)).map(([s0, s1]) => {
      const [j0, j1] = [s0 * STRIP, Math.min(g.n, s1 * STRIP)];
      return band(g, {
        b: g.b + j0 * g.bCol,
        c: g.c + j0 * 4,
        n: j1 - j0,
        packed: g.packed === undefined ? undefined : g.packed + j0 * g.k * 4,
      });
    });
  }
  return cuts(blocks, Math.min(parts, blocks)).map(([b0, b1]) => {
    const [i0, i1] = [b0 * GEMM_ROWS, Math.min(g.m, b1 * GEMM_ROWS)];
    return band(g, { a: g.a + i0 * g.aRow, c: g.c + i0 * g.cRow, m: i1 - i0 });
  });
}

/** Elements [start, end) per share of an elementwise kernel over n floats of `work` each: runs of whole vectors of 4, the tail in the last. */
export function splitElements(
  n: number,
  work: number,
  threads: number,
  minShareWork = MIN_SHARE_WORK,
): [number, number][] {
  const vectors = Math.ceil(n / 4);
  return cuts(vectors, Math.max(1, Math.min(vectors, partsFor(work * n, threads, minShareWork)))).map(([v0, v1]) => [
    v0 * 4,
    Math.min(n, v1 * 4),
  ]);
}

/** A batch of `count` equal products (or head groups) of `work` multiply-adds each, cut into runs of whole slices. */
export function splitBatch(
  count: number,
  work: number,
  threads: number,
  minShareWork = MIN_SHARE_WORK,
): [number, number][] {
  return cuts(count, Math.min(count, partsFor(work * count, threads, minShareWork)));
}
