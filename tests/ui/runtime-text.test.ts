import { describe, expect, it } from 'vitest';
import type { BackendChoice } from '../../src/pipeline/engine/engine-api.ts';
import { whereItRuns, whyThisBackend } from '../../src/ui/lib/runtime-text.ts';

const wasm: BackendChoice = {
  backend: 'wasm',
  reason: 'the WebGPU adapter is a software fallback (SwiftShader); using wasm (SIMD on, threads on)',
  threads: true,
  simd: true,
  adapter: null,
  forced: false,
  threadsCount: 1,
  kernelThreads: 2,
};

describe('the status strip’s runtime text', () => {
  it('says which part runs on how many threads, not "threads on · 1 thread · kernels on 2 threads"', () => {
    expect(whereItRuns(wasm)).toBe(
      "on the CPU (WebAssembly, SIMD): tfjs's ops on 1 thread, Spindle's kernels on 2 threads",
    );
    expect(whyThisBackend(wasm)).toBe('the WebGPU adapter is a software fallback (SwiftShader)');
  });

  it('a page without threads runs tfjs on one thread; a forced backend keeps its reason', () => {
    const single = { ...wasm, threads: false, threadsCount: undefined, kernelThreads: undefined, forced: true };
    expect(whereItRuns(single)).toBe("on the CPU (WebAssembly, SIMD): tfjs's ops on one thread");
    expect(whyThisBackend({ ...single, reason: 'forced by the user (SIMD on, single thread)' })).toBe(
      'forced by the user',
    );
  });

  it('names the GPU and plain JavaScript plainly', () => {
    expect(whereItRuns({ ...wasm, backend: 'webgpu', reason: 'real GPU adapter (nvidia)' })).toMatch(/^on the GPU/);
    expect(whereItRuns({ ...wasm, backend: 'cpu' })).toBe('on the CPU in plain JavaScript, one thread (slow)');
  });
});
