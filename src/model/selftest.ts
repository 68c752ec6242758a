/**
 * Browser self-test page (selftest.html): backend-compare.ts's comparison of one tiny model on the cpu
 * backend and on WebGPU (default) or wasm (`?backend=wasm`, Spindle's SIMD kernels over tfjs-wasm's
 * heap, with threads when the page is cross-origin isolated). Results go to `window.__selftest` (read by
 * tests/e2e/model-backends.e2e.test.ts) and to the page.
 */
import { compareWithCpu, type ComparedBackend, type SelftestResult } from './backend-compare.ts';
import { tfjsWasmPaths } from './wasm-paths.ts';

declare global {
  interface Window {
    __selftest?: SelftestResult;
  }
}

const backend: ComparedBackend = new URLSearchParams(location.search).get('backend') === 'wasm' ? 'wasm' : 'webgpu';
window.__selftest = { status: 'running' };
compareWithCpu(backend, { wasmPaths: tfjsWasmPaths })
  .catch((err: unknown): SelftestResult => ({ status: 'error', reason: err instanceof Error ? `${err.message}\n${err.stack}` : String(err) }))
  .then((result) => {
    window.__selftest = result;
    const { runs, ...summary } = result;
    const el = document.getElementById('result');
    if (el) el.textContent = JSON.stringify({ ...summary, ms: runs?.map((r) => `${r.backend}: ${r.ms.toFixed(0)} ms`) }, null, 2);
  });
