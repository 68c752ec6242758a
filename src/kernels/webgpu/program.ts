/**
 * What Spindle's WGSL programs share: a tfjs-webgpu program description (`WebGPUProgram`: tfjs builds
 * the bindings, the shape uniforms `uniforms.<name>Shape` and the entry point around `getUserCode()`)
 * and workgroup reductions.
 *
 * Programs ask for a number of workgroups along x. Past WebGPU's 65,535 per dimension (a 135M model's
 * attention rows, Adam's elements) tfjs reshapes the dispatch into a square or a cube, so each
 * program reads its workgroup's number with `groupIndex()`, which counts over all three dimensions,
 * and skips the padding groups the reshape adds.
 */
import * as tf from '@tensorflow/tfjs';
import type { WebGPUBackend, WebGPUProgram } from '@tensorflow/tfjs-backend-webgpu';

/** Threads per workgroup of the row and elementwise programs. */
export const GROUP = 64;

export interface ProgramSpec {
  name: string;
  inputs: string[];
  outputShape: number[];
  /** Workgroups wanted in all. */
  groups: number;
  workgroupSize?: [number, number, number];
  /** Extra uniforms, as WGSL struct members (`eps : f32,`); their values go to runWebGPUProgram. */
  uniforms?: string;
  code: string;
  /** Distinguishes compiled variants of one program (the shader cache key). */
  variant?: string;
}

export function program(spec: ProgramSpec): WebGPUProgram {
  return {
    variableNames: spec.inputs,
    outputShape: spec.outputShape,
    dispatchLayout: { x: spec.outputShape.map((_, i) => i) },
    dispatch: [spec.groups, 1, 1],
    workgroupSize: spec.workgroupSize ?? [GROUP, 1, 1],
    shaderKey: `spindle_${spec.name}_${spec.variant ?? ''}`,
    ...(spec.uniforms ? { uniforms: spec.uniforms } : {}),
    getUserCode: () => spec.code,
  };
}

/** WGSL: the workgroup's number, however tfjs shaped the dispatch. */
export const GROUP_INDEX = `
  fn groupIndex() -> i32 {
    return i32((workgroupId.z * numWorkgroups.y + workgroupId.y) * numWorkgroups.x + workgroupId.x);
  }
`;

/**
 * WGSL: `workgroupSum(v)` and `workgroupMax(v)` combine one value from each of the GROUP threads and
 * give every thread the result. Call them from uniform control flow (they have barriers).
 */
export const WORKGROUP_SUM = `
  var<workgroup> partial: array<f32, ${GROUP}>;
  fn workgroupReduce(value: f32, isMax: bool) -> f32 {
    let tid = localId.x;
    partial[tid] = value;
    workgroupBarrier();
    for (var stride = ${GROUP / 2}u; stride > 0u; stride = stride / 2u) {
      if (tid < stride) {
        let other = partial[tid + stride];
        partial[tid] = select(partial[tid] + other, max(partial[tid], other), isMax);
      }
      workgroupBarrier();
    }
    let total = partial[0];
    workgroupBarrier();
    return total;
  }
  fn workgroupSum(value: f32) -> f32 { return workgroupReduce(value, false); }
  fn workgroupMax(value: f32) -> f32 { return workgroupReduce(value, true); }
`;

/** A [..., cols] tensor viewed as [rows, cols] (the same buffer: what tfjs's Reshape returns). */
export function asRows(t: tf.TensorInfo): tf.TensorInfo {
  const cols = t.shape[t.shape.length - 1];
  return { ...t, shape: [tf.util.sizeFromShape(t.shape) / cols, cols] };
}

/** `out` given `shape` (the same buffer). */
export function reshaped(out: tf.TensorInfo, shape: number[]): tf.TensorInfo {
  return { ...out, shape };
}

type KernelRun = (
  inputs: Record<string, tf.TensorInfo>,
  attrs: Record<string, unknown>,
  backend: WebGPUBackend,
) => tf.TensorInfo;

/** Registers `run` as the webgpu kernel `kernelName` (tfjs passes every input the op named, and its attrs). */
export function registerWebGpuKernel(kernelName: string, run: KernelRun): void {
  tf.registerKernel({
    kernelName,
    backendName: 'webgpu',
    kernelFunc: ({ inputs, attrs, backend }) =>
      run(inputs as Record<string, tf.TensorInfo>, (attrs ?? {}) as Record<string, unknown>, backend as WebGPUBackend),
  });
}
