/**
 * The backends against the cpu one on a tiny model in the built app's selftest.html: logits, loss,
 * gradients (full and LoRA) and greedy tokens. WebGPU runs on SwiftShader in headless Chromium; wasm
 * runs Spindle's SIMD kernels over tfjs-wasm's heap, which in this cross-origin-isolated page is the
 * threaded build's shared memory: with one thread (this 2-core machine; tfjs uses half the cores) and
 * with two, where 2-D products go to XNNPACK's threads (the page's main thread may not block, so Spindle's
 * own kernels stay on one thread there). Then, in a worker (selftest.html?threads), that Spindle's kernels
 * give the same bits on several threads as on one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApp, type App } from './harness.ts';
import { comparisonProblems, type SelftestResult } from '../../src/selftest/backend-compare.ts';

describe('the model on each backend vs cpu (selftest.html)', () => {
  let app: App;
  beforeAll(async () => {
    app = await openApp('/selftest.html');
  });
  afterAll(async () => {
    await app?.close();
  });

  async function selftest(query: string, cores?: number): Promise<SelftestResult> {
    const page = await app.context.newPage();
    if (cores)
      await page.addInitScript(
        (n) => Object.defineProperty(Navigator.prototype, 'hardwareConcurrency', { get: () => n }),
        cores,
      );
    await page.goto(`${app.url}/selftest.html${query}`);
    await page.waitForFunction(() => window.__selftest && window.__selftest.status !== 'running', undefined, {
      timeout: 200_000,
    });
    const result = (await page.evaluate(() => window.__selftest)) as SelftestResult;
    await page.close();
    return result;
  }

  it('WebGPU agrees within tolerance, or reports clearly that it is unavailable', async () => {
    await app.page.waitForFunction(() => window.__selftest && window.__selftest.status !== 'running', undefined, {
      timeout: 200_000,
    });
    const result = (await app.page.evaluate(() => window.__selftest)) as SelftestResult;
    if (result.status === 'unavailable') {
      console.warn(`WebGPU unavailable in this Chromium: ${result.reason}; webgpu parity not checked.`);
      expect(result.reason).toMatch(/WebGPU|navigator\.gpu/);
      return;
    }
    expect(result.reason ?? '', 'self-test error').toBe('');
    expect(comparisonProblems(result)).toEqual([]);
    expect(app.errors.filter((e) => !/favicon|404/.test(e))).toEqual([]);
  });

  for (const [threads, cores] of [
    [1, undefined],
    [2, 4],
  ] as const) {
    it(`wasm with ${threads} thread${threads > 1 ? 's' : ''} agrees within tolerance`, async () => {
      const result = await selftest('?backend=wasm', cores);
      expect(result.reason ?? '', 'self-test error').toBe('');
      expect(result.runs?.[1].backend).toBe(`wasm (${threads} thread${threads > 1 ? 's' : ''})`);
      expect(comparisonProblems(result)).toEqual([]);
    });
  }

  it("Spindle's kernels give the same bits on 3 threads as on 1 in a worker over the threaded build's shared heap", async () => {
    const page = await app.context.newPage();
    await page.goto(`${app.url}/selftest.html?threads=3`);
    await page.waitForFunction(() => window.__threadsCheck, undefined, { timeout: 200_000 });
    const check = (await page.evaluate(() => window.__threadsCheck))!;
    await page.close();
    expect('error' in check ? check.error : '').toBe('');
    if ('error' in check) return;
    expect(check.threads).toBe(3);
    expect(check.compared.length).toBeGreaterThan(10);
    expect(check.differing).toEqual([]);
    expect(check.splitSteps, 'both decoding steps ran as recorded programs').toBe(2);
  });
});
