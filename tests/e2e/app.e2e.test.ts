import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApp, type App } from './harness.ts';

describe('the built app in Chromium', () => {
  let app: App;
  beforeAll(async () => {
    app = await openApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('is cross-origin isolated and names its backend in the status strip', async () => {
    const { page } = app;
    expect(await page.evaluate(() => globalThis.crossOriginIsolated)).toBe(true);
    const backend = page.locator('[data-testid="backend"] strong[data-backend]');
    await backend.waitFor({ timeout: 60_000 });
    expect(['webgpu', 'wasm', 'cpu']).toContain(await backend.getAttribute('data-backend'));
    await expect.poll(() => page.locator('[data-testid="indexeddb"] strong').textContent()).toBe('available');
    expect(await page.locator('[data-testid="isolation"] strong').textContent()).toBe('yes');
  });

  it('runs tfjs-wasm with worker threads in the production build', async () => {
    const page = await app.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // tfjs-wasm uses half the cores; pretend to have 4 so this 2-core machine really spawns 2 pthreads.
    await page.addInitScript(() => Object.defineProperty(Navigator.prototype, 'hardwareConcurrency', { get: () => 4 }));
    await page.goto(app.url + '/?backend=wasm');
    await page.locator('[data-backend="wasm"]').waitFor({ timeout: 60_000 });
    // tfjs-wasm on half the cores, Spindle's own kernels on every core the page reports (workers over the
    // same shared heap), said as one plain line.
    expect(await page.locator('[data-testid="runs-where"]').textContent()).toBe(
      "on the CPU (WebAssembly, SIMD): tfjs's ops on 2 threads, Spindle's kernels on 4 threads",
    );
    expect(await page.locator('[data-testid="backend-why"]').textContent()).toContain('forced by the user');
    expect(await page.locator('[data-testid="backend-why"]').textContent()).not.toContain('threads on');
    expect(errors).toEqual([]);
    await page.close();
  });
});
