/**
 * RMSNorm on WebGPU: y = x · r · w with r = 1/sqrt(mean(x²) + eps) per row, one dispatch forward, and
 * a gradient of two: dx = r·w·dy − r³·x·Σ(w·dy·x)/C in one row program, and dw = Σ_rows dy·x·r from
 * the row factors r (a row program) and one product and sum. tfjs's composite RMSNorm is nine
 * dispatches forward and more than twenty back.
 */
import * as tf from '@tensorflow/tfjs';
import type { WebGPUBackend } from '@tensorflow/tfjs-backend-webgpu';
import { RMS_NORM_DX_KERNEL, RMS_NORM_FACTOR_KERNEL, RMS_NORM_KERNEL } from '../fused.ts';
import { asRows, registerWebGpuKernel, reshaped } from './program.ts';
import { eachColumn, rowProgram } from './rows.ts';

const ROW_SQUARES = (target: string) => `
  var sq = 0.0;
  ${eachColumn(`let v = ${target}[base + c]; sq = sq + v * v;`)}
  let r = inverseSqrt(workgroupSum(sq) / f32(cols) + uniforms.eps);
`;

const EPS_UNIFORM = 'eps : f32,';
const eps = (value: number) => [{ type: 'float32', data: [value] }];

function forward(x: tf.TensorInfo, w: tf.TensorInfo, epsilon: number, backend: WebGPUBackend): tf.TensorInfo {
  const [rows] = x.shape;
  const prog = rowProgram({
    name: 'rms_norm',
    inputs: ['X', 'W'],
    outputShape: x.shape,
    rows,
    shapeOf: 'X',
    uniforms: EPS_UNIFORM,
    body: `${ROW_SQUARES('X')}
      ${eachColumn('result[base + c] = X[base + c] * r * W[c];')}`,
  });
  return backend.runWebGPUProgram(prog, [x, w], 'float32', eps(epsilon));
}

/** r per row, [rows]. */
function rowFactors(x: tf.TensorInfo, epsilon: number, backend: WebGPUBackend): tf.TensorInfo {
  const prog = rowProgram({
    name: 'rms_factor',
    inputs: ['X'],
    outputShape: [x.shape[0]],
    rows: x.shape[0],
    shapeOf: 'X',
    uniforms: EPS_UNIFORM,
    body: `${ROW_SQUARES('X')}
      if (tid == 0 && live) { result[row] = r; }`,
  });
  return backend.runWebGPUProgram(prog, [x], 'float32', eps(epsilon));
}

function inputGradient(
  dy: tf.TensorInfo,
  x: tf.TensorInfo,
  w: tf.TensorInfo,
  epsilon: number,
  backend: WebGPUBackend,
): tf.TensorInfo {
  const prog = rowProgram({
    name: 'rms_norm_dx',
    inputs: ['DY', 'X', 'W'],
    outputShape: x.shape,
    rows: x.shape[0],
    shapeOf: 'X',
    uniforms: EPS_UNIFORM,
    body: `${ROW_SQUARES('X')}
      var dot = 0.0;
      ${eachColumn('dot = dot + W[c] * DY[base + c] * X[base + c];')}
      let k = r * r * r * workgroupSum(dot) / f32(cols);
      ${eachColumn('result[base + c] = r * W[c] * DY[base + c] - k * X[base + c];')}`,
  });
  return backend.runWebGPUProgram(prog, [dy, x, w], 'float32', eps(epsilon));
}

/** Registers the forward kernel and the two its gradient (fused.ts) runs; each takes [..., C] as [rows, C]. */
export function registerRmsNorm(): void {
  registerWebGpuKernel(RMS_NORM_KERNEL, ({ x, weight }, attrs, backend) =>
    reshaped(forward(asRows(x), weight, attrs.eps as number, backend), x.shape),
  );
  registerWebGpuKernel(RMS_NORM_FACTOR_KERNEL, ({ x }, attrs, backend) =>
    reshaped(rowFactors(asRows(x), attrs.eps as number, backend), [...x.shape.slice(0, -1), 1]),
  );
  registerWebGpuKernel(RMS_NORM_DX_KERNEL, ({ dy, x, weight }, attrs, backend) =>
    reshaped(inputGradient(asRows(dy), asRows(x), weight, attrs.eps as number, backend), x.shape),
  );
}
