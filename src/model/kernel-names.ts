/**
 * Names of the fused kernels Spindle registers on some backends (src/model/webgpu on WebGPU). The ops
 * in ops.ts run one when the current backend has it and their composite form otherwise, so these
 * names live apart from the kernels, which load only with their backend.
 */
import * as tf from '@tensorflow/tfjs';

export const RMS_NORM_KERNEL = 'SpindleRMSNorm';
export const SOFTMAX_KERNEL = 'SpindleSoftmax';
export const ADAM_KERNEL = 'SpindleAdam';
export const HALF_MATMUL_KERNEL = 'SpindleHalfMatMul';

/** True when the current backend has the fused kernel `name`. */
export function hasFusedKernel(name: string): boolean {
  return tf.getKernel(name, tf.getBackend()) !== undefined;
}
