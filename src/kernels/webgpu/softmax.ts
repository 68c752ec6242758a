/**
 * Softmax over the last axis on WebGPU (attention's probabilities) with a fused gradient: tfjs's own
 * Softmax program forward, and dx = y·(dy − Σ dy·y) per row in one dispatch instead of tfjs's four
 * (multiply, sum, subtract, multiply), each a pass over the [B, H, T, T] scores.
 */
import * as tf from '@tensorflow/tfjs';
import type { WebGPUBackend } from '@tensorflow/tfjs-backend-webgpu';
import { SOFTMAX_DX_KERNEL, SOFTMAX_KERNEL } from '../fused.ts';
import { asRows, registerWebGpuKernel, reshaped } from './program.ts';
import { eachColumn, rowProgram } from './rows.ts';

function gradient(dy: tf.TensorInfo, y: tf.TensorInfo, backend: WebGPUBackend): tf.TensorInfo {
  const prog = rowProgram({
    name: 'softmax_dx',
    inputs: ['DY', 'Y'],
    outputShape: y.shape,
    rows: y.shape[0],
    shapeOf: 'Y',
    body: `var dot = 0.0;
      ${eachColumn('dot = dot + DY[base + c] * Y[base + c];')}
      let s = workgroupSum(dot);
      ${eachColumn('result[base + c] = Y[base + c] * (DY[base + c] - s);')}`,
  });
  return backend.runWebGPUProgram(prog, [dy, y], 'float32');
}

/** Registers the kernel and the one its gradient (fused.ts) runs; each takes [..., cols] as [rows, cols]. */
export function registerSoftmax(): void {
  const softmax = tf.getKernel('Softmax', 'webgpu');
  if (!softmax) throw new Error('tfjs-backend-webgpu has no Softmax kernel');
  // Over dim 1 of the [rows, cols] view (tfjs's webgpu kernel takes no negative dim).
  registerWebGpuKernel(SOFTMAX_KERNEL, ({ logits }, _attrs, backend) =>
    reshaped(
      softmax.kernelFunc({ inputs: { logits: asRows(logits) }, backend, attrs: { dim: 1 } }) as tf.TensorInfo,
      logits.shape,
    ),
  );
  registerWebGpuKernel(SOFTMAX_DX_KERNEL, ({ dy, y }, _attrs, backend) =>
    reshaped(gradient(asRows(dy), asRows(y), backend), y.shape),
  );
}
