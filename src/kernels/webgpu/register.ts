/**
 * Registers Spindle's WebGPU kernels with tfjs-backend-webgpu (call after that backend is imported).
 * The ops that use them (src/model/ops.ts, src/train/adam-update.ts) find them by name (fused.ts)
 * and run their composite tfjs form on a backend that has none.
 */
import * as tf from '@tensorflow/tfjs';
import { RMS_NORM_KERNEL } from '../fused.ts';
import { registerAdam } from './adam.ts';
import { registerAttention } from './attention.ts';
import { registerHalfMatMul } from './half-matmul.ts';
import { registerInt8Widen } from './int8-widen.ts';
import { registerRmsNorm } from './rms-norm.ts';
import { registerSoftmax } from './softmax.ts';

export function registerWebGpuKernels(): void {
  if (tf.getKernel(RMS_NORM_KERNEL, 'webgpu')) return;
  registerRmsNorm();
  registerSoftmax();
  registerAdam();
  registerHalfMatMul();
  registerInt8Widen();
  registerAttention();
}
