/**
 * A strided copy in WebAssembly SIMD, so that a decoding step run as a recorded program (heap-kernels.ts's
 * inParallel) can write its new keys and values into the cache without JS:
 *
 *   copyRows(dst, src, rows, n, dstRow, srcRow)      row r's n floats from src + r·srcRow to dst + r·dstRow
 *
 * n must be a multiple of 4 (a head's width is: attention.ts needs it too). Strides in bytes.
 */
import { forRange, FunctionBody, type ExportedFunction } from './assembler.ts';

const [DST, SRC, ROWS, N, DST_ROW, SRC_ROW] = [0, 1, 2, 3, 4, 5];

export function copyRowsFunction(): ExportedFunction {
  const f = new FunctionBody(['i32', 'i32', 'i32', 'i32', 'i32', 'i32']);
  const [row, offset, to, from] = [f.local('i32'), f.local('i32'), f.local('i32'), f.local('i32')];
  forRange(
    f,
    row,
    () => f.i32_const(0),
    () => f.get(ROWS),
    1,
    () => {
      f.get(DST).get(row).get(DST_ROW).i32_mul().i32_add().set(to);
      f.get(SRC).get(row).get(SRC_ROW).i32_mul().i32_add().set(from);
      forRange(
        f,
        offset,
        () => f.i32_const(0),
        () => f.get(N).i32_const(4).i32_mul(),
        16,
        () => {
          f.get(to).get(offset).i32_add();
          f.get(from).get(offset).i32_add().v128_load();
          f.v128_store();
        },
      );
    },
  );
  return { name: 'copyRows', body: f };
}
