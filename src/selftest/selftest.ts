/**
 * Browser self-test page (selftest.html): backend-compare.ts's comparison of one tiny model on the cpu
 * backend and on WebGPU (default) or wasm (`?backend=wasm`, Spindle's SIMD kernels over tfjs-wasm's
 * heap, with threads when the page is cross-origin isolated). Results go to `window.__selftest` (read by
 * tests/e2e/model-backends.e2e.test.ts) and to the page, with the verdict (comparisonProblems).
 *
 * With `?threads=N` it instead runs threads-check.ts in a worker (Spindle's kernel threads need a thread
 * that may block): the same bits on 1 and N kernel threads, into `window.__threadsCheck`.
 */
import { compareWithCpu, comparisonProblems, type ComparedBackend, type SelftestResult } from './backend-compare.ts';
import type { ThreadsCheck } from './threads-check.ts';
import { tfjsWasmPaths } from '../kernels/wasm-paths.ts';

declare global {
  interface Window {
    __selftest?: SelftestResult;
    __threadsCheck?: ThreadsCheck | { error: string };
  }
}

const threads = Number(new URLSearchParams(location.search).get('threads'));
if (threads) {
  const worker = new Worker(new URL('../../workers/threads-check.worker.ts', import.meta.url), { type: 'module' });
  worker.onmessage = (event: MessageEvent<ThreadsCheck | { error: string }>) => {
    window.__threadsCheck = event.data;
    const el = document.getElementById('result');
    if (el) el.textContent = JSON.stringify(event.data, null, 2);
  };
  worker.onerror = (event) => (window.__threadsCheck = { error: event.message });
  worker.postMessage({ threads });
}

const backend: ComparedBackend = new URLSearchParams(location.search).get('backend') === 'wasm' ? 'wasm' : 'webgpu';
window.__selftest = { status: 'running' };
if (!threads)
  void compareWithCpu(backend, { wasmPaths: tfjsWasmPaths })
    .catch((err: unknown): SelftestResult => ({
      status: 'error',
      reason: err instanceof Error ? `${err.message}\n${err.stack}` : String(err),
    }))
    .then((result) => {
      window.__selftest = result;
      const { runs, ...summary } = result;
      // The verdict first, by the tolerances the tests hold the backends to.
      const problems = comparisonProblems(result);
      const verdict = problems.length ? problems : `${backend} agrees with cpu`;
      const el = document.getElementById('result');
      if (el)
        el.textContent = JSON.stringify(
          { verdict, ...summary, ms: runs?.map((r) => `${r.backend}: ${r.ms.toFixed(0)} ms`) },
          null,
          2,
        );
    });
