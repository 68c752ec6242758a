/**
 * One Adam / AdamW update of one variable (PyTorch's, bias-corrected; the formulas are in
 * optimizer.ts's header): one fused kernel where the backend has it (wasm: all three outputs from one
 * pass; WebGPU: one kernel per output), tfjs ops otherwise.
 */
import * as tf from '@tensorflow/tfjs';
import { ADAM_KERNEL, ADAM_STEP_KERNEL, hasFusedKernel, type AdamHyper } from '../kernels/fused.ts';

export type { AdamHyper };

export interface AdamResult {
  p: tf.Tensor;
  m: tf.Tensor;
  v: tf.Tensor;
}

export function adamUpdate(p: tf.Tensor, grad: tf.Tensor, m0: tf.Tensor, v0: tf.Tensor, h: AdamHyper): AdamResult {
  if (hasFusedKernel(ADAM_STEP_KERNEL)) {
    const [next, m, v] = tf
      .engine()
      .runKernel(ADAM_STEP_KERNEL, { p, g: grad, m: m0, v: v0 }, h as unknown as tf.NamedAttrMap) as tf.Tensor[];
    return { p: next, m, v };
  }
  if (hasFusedKernel(ADAM_KERNEL)) {
    const part = (which: 'p' | 'm' | 'v') =>
      tf.engine().runKernel(ADAM_KERNEL, { p, g: grad, m: m0, v: v0 }, { ...h, part: which }) as tf.Tensor;
    return { p: part('p'), m: part('m'), v: part('v') };
  }
  let g = h.gradScale === 1 ? grad : tf.mul(grad, h.gradScale);
  if (h.kind === 'adam' && h.wd > 0) g = tf.add(g, tf.mul(p, h.wd));
  const m = tf.add(tf.mul(m0, h.b1), tf.mul(g, 1 - h.b1));
  const v = tf.add(tf.mul(v0, h.b2), tf.mul(tf.square(g), 1 - h.b2));
  const base = h.kind === 'adamw' && h.wd > 0 ? tf.mul(p, 1 - h.lr * h.wd) : p;
  const update = tf.div(tf.div(m, h.bc1), tf.add(tf.sqrt(tf.div(v, h.bc2)), h.eps));
  return { p: tf.sub(base, tf.mul(update, h.lr)), m, v };
}
