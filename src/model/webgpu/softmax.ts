/**
 * Softmax over the last axis on WebGPU (attention's probabilities) with a fused gradient: tfjs's own
 * Softmax program forward, and dx = y·(dy − Σ dy·y) per row in one dispatch instead of tfjs's four
 * (multiply, sum, subtract, multiply), each a pass over the [B, H, T, T] scores.
 */
import * as tf from '@tensorflow/tfjs';
import type { WebGPUBackend } from '@tensorflow/tfjs-backend-webgpu';
import { SOFTMAX_KERNEL } from '../kernel-names.ts';
import { registerWebGpuKernel } from './program.ts';
import { eachColumn, rowProgram } from './rows.ts';

function gradient(dy: tf.TensorInfo, y: tf.TensorInfo, backend: WebGPUBackend): tf.TensorInfo {
  const prog = rowProgram({
    name: 'softmax_dx', inputs: ['DY', 'Y'], outputShape: y.shape, rows: y.shape[0], shapeOf: 'Y',
    body: `var dot = 0.0;
      ${eachColumn('dot = dot + DY[base + c] * Y[base + c];')}
      let s = workgroupSum(dot);
      ${eachColumn('result[base + c] = Y[base + c] * (DY[base + c] - s);')}`,
  });
  return backend.runWebGPUProgram(prog, [dy, y], 'float32');
}

const DX_KERNEL = `${SOFTMAX_KERNEL}Dx`;

/** Registers the kernel (logits [rows, cols]), its gradient kernel and the gradient. */
export function registerSoftmax(): void {
  const softmax = tf.getKernel('Softmax', 'webgpu');
  if (!softmax) throw new Error('tfjs-backend-webgpu has no Softmax kernel');
  // Its input is [rows, cols]: softmax over dim 1 (tfjs's webgpu kernel takes no negative dim).
  registerWebGpuKernel(SOFTMAX_KERNEL, (inputs, _attrs, backend) => softmax.kernelFunc({ inputs: { logits: inputs.logits }, backend, attrs: { dim: 1 } }) as tf.TensorInfo);
  registerWebGpuKernel(DX_KERNEL, (inputs, _attrs, backend) => gradient(inputs.dy, inputs.y, backend));
  tf.registerGradient({
    kernelName: SOFTMAX_KERNEL,
    outputsToSave: [true],
    gradFunc: (dy, saved) => ({ logits: () => tf.engine().runKernel(DX_KERNEL, { dy: dy as tf.Tensor, y: saved[0] }, {}) as tf.Tensor }),
  });
}
