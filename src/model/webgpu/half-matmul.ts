/**
 * x [M, K] (f32) · W [K, N] where W stays half precision on the GPU: f16 or bf16 pairs packed in one
 * 32-bit word along N (an int32 tensor [K, N/2], `packHalfWeight`), widened to f32 as each tile is
 * read, with f32 products and sums. A frozen base weight then takes half the GPU memory of f32; LoRA
 * and everything trained stay f32. The widening is core WGSL (`unpack2x16float`, a shift for bf16),
 * so it needs no `shader-f16` feature and runs on every adapter, SwiftShader included.
 *
 * Gradient (fused.ts): for x only, dx = dy · Wᵀ by the same program reading W transposed; a half weight is frozen.
 * Tiled: each 16 × 16 workgroup computes a 16 × 16 block of the output from 16 × 16 tiles of both
 * operands in workgroup memory.
 */
import * as tf from '@tensorflow/tfjs';
import type { WebGPUBackend } from '@tensorflow/tfjs-backend-webgpu';
import { HALF_MATMUL_KERNEL } from '../fused.ts';
import { GROUP_INDEX, program, registerWebGpuKernel } from './program.ts';

export type HalfFormat = 'f16' | 'bf16';
const TILE = 16;

const WIDEN: Record<HalfFormat, string> = {
  f16: 'unpack2x16float(word)',
  bf16: 'vec2<f32>(bitcast<f32>(word << 16u), bitcast<f32>(word & 0xffff0000u))',
};

/** out [M, cols] = A [M, inner] · B, with B = W (inner = K, cols = N) or Wᵀ (inner = N, cols = K). */
function run(a: tf.TensorInfo, w: tf.TensorInfo, format: HalfFormat, transposeW: boolean, backend: WebGPUBackend): tf.TensorInfo {
  const [M, inner] = a.shape;
  const K = w.shape[0];
  const N = w.shape[1] * 2;
  if (inner !== (transposeW ? N : K)) throw new Error(`half matmul: [${a.shape}] · ${transposeW ? 'Wᵀ' : 'W'} with W [${K}, ${N}]: inner sizes differ`);
  const cols = transposeW ? K : N;
  const colGroups = Math.ceil(cols / TILE);
  const prog = program({
    name: 'half_matmul', variant: `${format}_${transposeW ? 't' : 'n'}`, inputs: ['A', 'W'], outputShape: [M, cols],
    groups: colGroups * Math.ceil(M / TILE), workgroupSize: [TILE, TILE, 1], uniforms: 'colGroups : i32,',
    code: `
      var<workgroup> tileA: array<array<f32, ${TILE}>, ${TILE}>;
      var<workgroup> tileB: array<array<f32, ${TILE}>, ${TILE}>;
      // W as stored, [K, N] in words of two.
      fn weight(k: i32, n: i32) -> f32 {
        let word = bitcast<u32>(W[k * ${N / 2} + n / 2]);
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
          if (kb < inner && col < ${cols}) { vb = ${transposeW ? 'weight(col, kb)' : 'weight(kb, col)'}; }
          tileB[ty][tx] = vb;
          workgroupBarrier();
          for (var i = 0; i < ${TILE}; i = i + 1) { acc = acc + tileA[ty][i] * tileB[i][tx]; }
          workgroupBarrier();
        }
        if (row < M && col < ${cols}) { result[row * ${cols} + col] = acc; }
      }
    `,
  });
  return backend.runWebGPUProgram(prog, [a, w], 'float32', [{ type: 'int32', data: [colGroups] }]);
}

export function registerHalfMatMul(): void {
  registerWebGpuKernel(HALF_MATMUL_KERNEL, (inputs, attrs, backend) => run(inputs.a, inputs.w, attrs.format as HalfFormat, Boolean(attrs.transposeW), backend));
}

/**
 * A half weight's raw 16-bit values [K, N] (row-major, N even) as the packed int32 tensor [K, N/2] the
 * kernel reads: element n in the low half of word n/2 when n is even, the high half when odd.
 */
export function packHalfWeight(bits: Uint16Array, K: number, N: number): tf.Tensor2D {
  if (N % 2 !== 0) throw new Error(`packHalfWeight: N = ${N} must be even (two halves per word)`);
  if (bits.length !== K * N) throw new Error(`packHalfWeight: ${bits.length} values for [${K}, ${N}]`);
  const words = new Int32Array(bits.buffer.slice(bits.byteOffset, bits.byteOffset + bits.byteLength));
  return tf.tensor2d(words, [K, N / 2], 'int32');
}
