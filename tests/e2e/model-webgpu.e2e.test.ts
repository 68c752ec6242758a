/**
 * WebGPU (SwiftShader in headless Chromium) against the cpu backend on a tiny model: logits, loss,
 * gradients (full and LoRA) and greedy tokens, computed by selftest.html in the built app.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApp, type App } from './harness.ts';
import { comparisonProblems, type SelftestResult } from '../../src/model/backend-compare.ts';

describe('model on WebGPU vs cpu (selftest.html)', () => {
  let app: App;
  beforeAll(async () => { app = await openApp('/selftest.html'); });
  afterAll(async () => { await app?.close(); });

  it('agrees within tolerance, or reports clearly that WebGPU is unavailable', async () => {
    const { page } = app;
    await page.waitForFunction(() => window.__selftest && window.__selftest.status !== 'running', undefined, { timeout: 200_000 });
    const result = (await page.evaluate(() => window.__selftest)) as SelftestResult;
    if (result.status === 'unavailable') {
      console.warn(`WebGPU unavailable in this Chromium: ${result.reason}; webgpu parity not checked.`);
      expect(result.reason).toMatch(/WebGPU|navigator\.gpu/);
      return;
    }
    expect(result.reason ?? '', 'self-test error').toBe('');
    expect(comparisonProblems(result)).toEqual([]);
    expect(app.errors.filter((e) => !/favicon|404/.test(e))).toEqual([]);
  });
});
