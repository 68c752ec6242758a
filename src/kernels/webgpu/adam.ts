/**
 * Adam / AdamW on WebGPU: the new first moment, second moment and parameter each in one elementwise
 * dispatch over (p, g, m, v), instead of about a dozen tfjs ops per variable. The update is
 * src/train/adam-update.ts's, written in WGSL; tests/kernels/webgpu-kernels.test.ts checks they agree.
 */
import * as tf from '@tensorflow/tfjs';
import type { WebGPUBackend } from '@tensorflow/tfjs-backend-webgpu';
import { ADAM_KERNEL } from '../fused.ts';
import { GROUP, GROUP_INDEX, program, registerWebGpuKernel } from './program.ts';

export type AdamPart = 'm' | 'v' | 'p';
const PARTS: Record<AdamPart, string> = {
  m: 'result[i] = m;',
  v: 'result[i] = v;',
  p: 'result[i] = base - uniforms.lr * (m / uniforms.bc1) / (sqrt(v / uniforms.bc2) + uniforms.eps);',
};

const HYPER = ['lr', 'b1', 'b2', 'eps', 'bc1', 'bc2', 'wd', 'gradScale'] as const;

function run(inputs: tf.TensorInfo[], attrs: Record<string, unknown>, backend: WebGPUBackend): tf.TensorInfo {
  const part = attrs.part as AdamPart;
  const decoupled = attrs.kind === 'adamw';
  const n = tf.util.sizeFromShape(inputs[0].shape);
  const prog = program({
    name: 'adam',
    variant: `${part}_${decoupled ? 'w' : 'l2'}`,
    inputs: ['P', 'G', 'M', 'V'],
    outputShape: inputs[0].shape,
    groups: Math.ceil(n / GROUP),
    uniforms: `${HYPER.map((h) => `${h} : f32,`).join(' ')} n : i32,`,
    code: `
      ${GROUP_INDEX}
      fn main(index: i32) {
        let i = groupIndex() * ${GROUP} + i32(localId.x);
        if (i >= uniforms.n) { return; }
        let p = P[i];
        let g = G[i] * uniforms.gradScale${decoupled ? '' : ' + uniforms.wd * p'};
        let m = uniforms.b1 * M[i] + (1.0 - uniforms.b1) * g;
        let v = uniforms.b2 * V[i] + (1.0 - uniforms.b2) * g * g;
        let base = ${decoupled ? 'p * (1.0 - uniforms.lr * uniforms.wd)' : 'p'};
        ${PARTS[part]}
      }
    `,
  });
  const uniforms = [
    ...HYPER.map((h) => ({ type: 'float32', data: [attrs[h] as number] })),
    { type: 'int32', data: [n] },
  ];
  return backend.runWebGPUProgram(prog, inputs, 'float32', uniforms);
}

export function registerAdam(): void {
  registerWebGpuKernel(ADAM_KERNEL, (inputs, attrs, backend) =>
    run([inputs.p, inputs.g, inputs.m, inputs.v], attrs, backend),
  );
}
