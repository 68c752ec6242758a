/**
 * The status strip's plain account of where the work runs. tfjs-wasm runs its own ops on up to half
 * the cores while Spindle's kernels (products, attention, Adam) split theirs over every core, so
 * "threads on · 1 thread · kernels on 2 threads" reads as a contradiction; this says which part runs
 * on how many threads. The backend's reason keeps only why it was chosen (its wasm details are said here).
 */
import type { BackendChoice } from '../../pipeline/engine/engine-api.ts';

const threads = (n: number) => `${n} thread${n === 1 ? '' : 's'}`;

/** "on the CPU (WebAssembly, SIMD): tfjs's ops on 1 thread, Spindle's kernels on 2 threads". */
export function whereItRuns(choice: BackendChoice): string {
  if (choice.backend === 'webgpu') return "on the GPU (WebGPU): the model's ops and Spindle's WGSL kernels";
  if (choice.backend === 'cpu') return 'on the CPU in plain JavaScript, one thread (slow)';
  const kind = `on the CPU (WebAssembly${choice.simd ? ', SIMD' : ''})`;
  const tfjs = choice.threads ? threads(choice.threadsCount ?? 1) : 'one thread';
  const kernels = choice.kernelThreads ? `, Spindle's kernels on ${threads(choice.kernelThreads)}` : '';
  return `${kind}: tfjs's ops on ${tfjs}${kernels}`;
}

/** Why this backend: the reason without its wasm details ("SIMD on, threads on"), which whereItRuns says plainly. */
export function whyThisBackend(choice: BackendChoice): string {
  return choice.reason
    .replace(/; using wasm \(SIMD (on|off), (threads on|single thread)\)$/, '')
    .replace(/ \(SIMD (on|off), (threads on|single thread)\)$/, '');
}
