/**
 * Attention for generation on WebGPU in one dispatch: softmax(q·kᵀ·scale + bias)·v, one workgroup per
 * query row, where tfjs's path is five (a batched product, a scale, the mask, a softmax, a second
 * product) per layer and step, and a decoding step is bound by dispatches, not arithmetic. A row's
 * scores wait in workgroup memory between the passes, so keys are capped at MAX_KEYS (8 KiB of the
 * 16 KiB every adapter has); the op falls back to tfjs's path past it, and for training, which needs
 * the gradient (this kernel has none).
 *
 * Inputs: q [B, G, R, D] (G key-value heads, R = the query heads sharing one × the new positions T, as
 * transformer.ts groups them), k and v [B, G, Tk, D], and optionally the additive mask, [T, Tk] or
 * [B, 1, 1, T, Tk]; row r of a group is position r mod T.
 */
import type * as tf from '@tensorflow/tfjs';
import type { WebGPUBackend } from '@tensorflow/tfjs-backend-webgpu';
import { ATTENTION_KERNEL } from '../fused.ts';
import { GROUP, GROUP_INDEX, WORKGROUP_SUM, program, registerWebGpuKernel } from './program.ts';

/** Keys one row's scores may span (workgroup memory holds them all). */
const MAX_KEYS = 2048;

function run(
  q: tf.TensorInfo,
  k: tf.TensorInfo,
  v: tf.TensorInfo,
  bias: tf.TensorInfo | undefined,
  scale: number,
  positions: number,
  backend: WebGPUBackend,
): tf.TensorInfo {
  const [B, G, R] = q.shape;
  const Tk = k.shape[2];
  if (Tk > MAX_KEYS) throw new Error(`fused attention: ${Tk} keys; at most ${MAX_KEYS} fit in workgroup memory`);
  const perBatchBias = bias !== undefined && bias.shape.length === 5;
  const biasAt =
    bias === undefined ? '0.0' : perBatchBias ? 'BIAS[(b * uniforms.positions + t) * Tk + j]' : 'BIAS[t * Tk + j]';
  const prog = program({
    name: 'attention',
    variant: bias === undefined ? 'nomask' : perBatchBias ? 'rowmask' : 'mask',
    inputs: bias === undefined ? ['Q', 'K', 'V'] : ['Q', 'K', 'V', 'BIAS'],
    outputShape: q.shape,
    groups: B * G * R,
    uniforms: 'scale : f32, positions : i32,',
    code: `
      ${GROUP_INDEX}
      ${WORKGROUP_SUM}
      var<workgroup> scores: array<f32, ${MAX_KEYS}>;
      fn main(index: i32) {
        let G = uniforms.qShape[1];
        let R = uniforms.qShape[2];
        let D = uniforms.qShape[3];
        let Tk = uniforms.kShape[2];
        let row = groupIndex();
        let live = row < uniforms.qShape[0] * G * R;
        let b = row / (G * R);
        let g = (row / R) % G;
        let t = (row % R) % uniforms.positions;
        let qBase = row * D;
        let kvBase = (b * G + g) * Tk * D;
        let tid = i32(localId.x);
        var top = -3.402823e+38;
        for (var j = tid; j < Tk; j = j + ${GROUP}) {
          if (live) {
            var dot = 0.0;
            for (var d = 0; d < D; d = d + 1) { dot = dot + Q[qBase + d] * K[kvBase + j * D + d]; }
            let s = dot * uniforms.scale + ${biasAt};
            scores[j] = s;
            top = max(top, s);
          }
        }
        let m = workgroupMax(top);
        var total = 0.0;
        for (var j = tid; j < Tk; j = j + ${GROUP}) {
          if (live) {
            let e = exp(scores[j] - m);
            scores[j] = e;
            total = total + e;
          }
        }
        let sum = workgroupSum(total);
        for (var d = tid; d < D; d = d + ${GROUP}) {
          if (live) {
            var acc = 0.0;
            for (var j = 0; j < Tk; j = j + 1) { acc = acc + scores[j] * V[kvBase + j * D + d]; }
            result[qBase + d] = acc / sum;
          }
        }
      }
    `,
  });
  const inputs = bias === undefined ? [q, k, v] : [q, k, v, bias];
  return backend.runWebGPUProgram(prog, inputs, 'float32', [
    { type: 'float32', data: [scale] },
    { type: 'int32', data: [positions] },
  ]);
}

export function registerAttention(): void {
  registerWebGpuKernel(ATTENTION_KERNEL, ({ q, k, v, bias }, attrs, backend) =>
    run(q, k, v, bias, attrs.scale as number, attrs.positions as number, backend),
  );
}
