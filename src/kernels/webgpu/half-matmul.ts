/**
 * x [M, K] (f32) · W [K, N] where W stays half precision on the GPU: f16 or bf16 pairs packed in one
 * 32-bit word along N (an int32 tensor [K, N/2], half.ts's `packHalf`), widened to f32 as each tile is
 * read, with f32 products and sums. A frozen base weight then takes half the GPU memory of f32; LoRA
 * and everything trained stay f32. The widening is core WGSL (`unpack2x16float`, a shift for bf16),
 * so it needs no `shader-f16` feature and runs on every adapter, SwiftShader included.
 *
 * Gradient (fused.ts): for x only, dx = dy · Wᵀ by the same program reading W transposed; a half
 * weight is frozen. Sizes are uniforms, not constants in the source: tfjs caches a compiled program by
 * its key and the ranks of its inputs, not their sizes. Tiled: each 16 × 16 workgroup computes a
 * 16 × 16 block of the output from 16 × 16 tiles of both operands in workgroup memory.
 */
import * as tf from '@tensorflow/tfjs';
import type { WebGPUBackend } from '@tensorflow/tfjs-backend-webgpu';
import { HALF_MATMUL_KERNEL, HALF_WIDEN_KERNEL } from '../fused.ts';
import type { HalfFormat } from '../half.ts';
import { asRows, GROUP, GROUP_INDEX, program, registerWebGpuKernel, reshaped } from './program.ts';

const TILE = 16;

const WIDEN: Record<HalfFormat, string> = {
  f16: 'unpack2x16float(word)',
  bf16: 'vec2<f32>(bitcast<f32>(word << 16u), bitcast<f32>(word & 0xffff0000u))',
};

/** out [M, cols] = A [M, inner] · B, with B = W (inner = K, cols = N) or Wᵀ (inner = N, cols = K). */
function run(
  a: tf.TensorInfo,
  w: tf.TensorInfo,
  format: HalfFormat,
  transposeW: boolean,
  backend: WebGPUBackend,
): tf.TensorInfo {
  const [M, inner] = a.shape;
  const K = w.shape[0];
  const N = w.shape[1] * 2;
  if (inner !== (transposeW ? N : K))
    throw new Error(`half matmul: [${a.shape}] · ${transposeW ? 'Wᵀ' : 'W'} with W [${K}, ${N}]: inner sizes differ`);
  const cols = transposeW ? K : N;
  const colGroups = Math.ceil(cols / TILE);
  const prog = program({
    name: 'half_matmul',
    variant: `${format}_${transposeW ? 't' : 'n'}`,
    inputs: ['A', 'W'],
    outputShape: [M, cols],
    groups: colGroups * Math.ceil(M / TILE),
    workgroupSize: [TILE, TILE, 1],
    uniforms: 'colGroups : i32, halfN : i32, cols : i32,',
    code: `
      var<workgroup> tileA: array<array<f32, ${TILE}>, ${TILE}>;
      var<workgroup> tileB: array<array<f32, ${TILE}>, ${TILE}>;
      // W as stored, [K, N] in words of two.
      fn weight(k: i32, n: i32) -> f32 {
        let word = bitcast<u32>(W[k * uniforms.halfN + n / 2]);
        let pair = ${WIDEN[format]};
        return select(pair.x, pair.y, (n & 1) == 1);
      }
      ${GROUP_INDEX}
      fn main(index: i32) {
        let group = groupIndex();
        let ty = i32(localId.y);
        let tx = i32(localId.x);
        let row = (group / uniforms.colGroups) * ${TILE} + ty; // past M in the reshape's padding groups
        let col = (group % uniforms.colGroups) * ${TILE} + tx;
        let M = uniforms.aShape[0];
        let inner = uniforms.aShape[1];
        var acc = 0.0;
        for (var t = 0; t < (inner + ${TILE - 1}) / ${TILE}; t = t + 1) {
          let ka = t * ${TILE} + tx;
          var va = 0.0;
          if (row < M && ka < inner) { va = A[row * inner + ka]; }
          tileA[ty][tx] = va;
          let kb = t * ${TILE} + ty;
          var vb = 0.0;
          if (kb < inner && col < uniforms.cols) { vb = ${transposeW ? 'weight(col, kb)' : 'weight(kb, col)'}; }
          tileB[ty][tx] = vb;
          workgroupBarrier();
          for (var i = 0; i < ${TILE}; i = i + 1) { acc = acc + tileA[ty][i] * tileB[i][tx]; }
          workgroupBarrier();
        }
        if (row < M && col < uniforms.cols) { result[row * uniforms.cols + col] = acc; }
      }
    `,
  });
  return backend.runWebGPUProgram(
    prog,
    [a, w],
    'float32',
    [colGroups, N / 2, cols].map((v) => ({ type: 'int32', data: [v] })),
  );
}

/** W [K, N] as float32, from its packed [K, N/2] words: one thread per word. */
function widen(w: tf.TensorInfo, format: HalfFormat, backend: WebGPUBackend): tf.TensorInfo {
  const [K, halfN] = w.shape;
  const words = K * halfN;
  const prog = program({
    name: 'half_widen',
    variant: format,
    inputs: ['W'],
    outputShape: [K, halfN * 2],
    groups: Math.ceil(words / GROUP),
    uniforms: 'words : i32,',
    code: `
      ${GROUP_INDEX}
      fn main(index: i32) {
        let i = groupIndex() * ${GROUP} + i32(localId.x);
        if (i >= uniforms.words) { return; }
        let word = bitcast<u32>(W[i]);
        let pair = ${WIDEN[format]};
        result[2 * i] = pair.x;
        result[2 * i + 1] = pair.y;
      }
    `,
  });
  return backend.runWebGPUProgram(prog, [w], 'float32', [{ type: 'int32', data: [words] }]);
}

export function registerHalfMatMul(): void {
  registerWebGpuKernel(HALF_WIDEN_KERNEL, ({ w }, attrs, backend) => widen(w, attrs.format as HalfFormat, backend));
  // a [..., inner] is multiplied as [rows, inner] and comes back [..., cols].
  registerWebGpuKernel(HALF_MATMUL_KERNEL, ({ a, w }, attrs, backend) => {
    const out = run(asRows(a), w, attrs.format as HalfFormat, Boolean(attrs.transposeW), backend);
    return reshaped(out, [...a.shape.slice(0, -1), out.shape[1]]);
  });
}
