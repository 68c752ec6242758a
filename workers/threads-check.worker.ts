/**
 * Module worker for selftest.html?threads: starts wasm (the threaded build's shared heap, this page being
 * cross-origin isolated) and posts src/selftest/threads-check.ts's comparison of 1 and `threads` kernel
 * threads, or the error that stopped it.
 */
import { initBackend } from '../src/kernels/backend.ts';
import { compareThreadCounts } from '../src/selftest/threads-check.ts';
import { tfjsWasmPaths } from '../src/kernels/wasm-paths.ts';

self.onmessage = async (event: MessageEvent<{ threads: number }>) => {
  try {
    await initBackend({ forced: 'wasm', wasmPaths: tfjsWasmPaths, kernelThreads: event.data.threads });
    self.postMessage(await compareThreadCounts(event.data.threads));
  } catch (error) {
    self.postMessage({ error: error instanceof Error ? `${error.message}\n${error.stack}` : String(error) });
  }
};
