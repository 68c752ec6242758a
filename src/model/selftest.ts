/**
 * Browser self-test page (selftest.html): backend-compare.ts's cpu-vs-WebGPU comparison of one tiny
 * model. Results go to `window.__selftest` (read by tests/e2e/model-webgpu.e2e.test.ts) and to the page.
 */
import { compareWebGpuWithCpu, type SelftestResult } from './backend-compare.ts';

declare global {
  interface Window {
    __selftest?: SelftestResult;
  }
}

window.__selftest = { status: 'running' };
compareWebGpuWithCpu()
  .catch((err: unknown): SelftestResult => ({ status: 'error', reason: err instanceof Error ? `${err.message}\n${err.stack}` : String(err) }))
  .then((result) => {
    window.__selftest = result;
    const { runs, ...summary } = result;
    const el = document.getElementById('result');
    if (el) el.textContent = JSON.stringify({ ...summary, ms: runs?.map((r) => `${r.backend}: ${r.ms.toFixed(0)} ms`) }, null, 2);
  });
