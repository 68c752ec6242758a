/**
 * SpindleInt8Widen on WebGPU (int8.ts): an int8 weight, four codes to an int32 word along the output axis,
 * and its float32 scale per output channel → the float32 [in, out] (or transposed [out, in]) weight, one
 * thread per output element. `extractBits` on an i32 sign-extends, so a code reads back as -127…127;
 * byte k of a word is bits 8k…8k+7, as the little-endian Int8Array view that packed it wrote it.
 */
import type { WebGPUBackend } from '@tensorflow/tfjs-backend-webgpu';
import * as tf from '@tensorflow/tfjs';
import { INT8_WIDEN_KERNEL } from '../fused.ts';
import { GROUP, GROUP_INDEX, program, registerWebGpuKernel } from './program.ts';

function widen(
  q: tf.TensorInfo,
  scales: tf.TensorInfo,
  outDim: number,
  transpose: boolean,
  backend: WebGPUBackend,
): tf.TensorInfo {
  const [inDim, wordsPerRow] = q.shape;
  const total = inDim * outDim;
  const outCols = transpose ? inDim : outDim;
  const prog = program({
    name: 'int8_widen',
    variant: transpose ? 't' : 'n',
    inputs: ['Q', 'S'],
    outputShape: transpose ? [outDim, inDim] : [inDim, outDim],
    groups: Math.ceil(total / GROUP),
    uniforms: 'total : i32, outCols : i32, wordsPerRow : i32,',
    code: `
      ${GROUP_INDEX}
      fn main(index: i32) {
        let i = groupIndex() * ${GROUP} + i32(localId.x);
        if (i >= uniforms.total) { return; }
        let r = i / uniforms.outCols;
        let c = i % uniforms.outCols;
        let row = ${transpose ? 'c' : 'r'};
        let o = ${transpose ? 'r' : 'c'};
        let word = Q[row * uniforms.wordsPerRow + o / 4];
        result[i] = f32(extractBits(word, u32((o % 4) * 8), 8u)) * S[o];
      }
    `,
  });
  return backend.runWebGPUProgram(
    prog,
    [q, scales],
    'float32',
    [total, outCols, wordsPerRow].map((v) => ({ type: 'int32', data: [v] })),
  );
}

export function registerInt8Widen(): void {
  registerWebGpuKernel(INT8_WIDEN_KERNEL, ({ q, scales }, attrs, backend) =>
    widen(q, scales, attrs.outDim as number, Boolean(attrs.transpose), backend),
  );
}
