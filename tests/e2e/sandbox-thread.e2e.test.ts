/**
 * The js tool in the built app: a rollout worker hands each js call to a sandbox thread of its own (a
 * nested Web Worker under a watchdog, src/sandbox/js-thread.ts). The scripted expert of func_trace runs
 * its functions through js in the Playground; the call must come back from that thread with its result.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApp, type App } from './harness.ts';

describe('the js sandbox thread in the browser', () => {
  let app: App;
  beforeAll(async () => {
    app = await openApp('/#playground');
  });
  afterAll(async () => {
    await app?.close();
  });

  it("runs the expert's js call in its own worker and shows its result", async () => {
    const { page } = app;
    await expect
      .poll(() => page.locator('[data-testid="policy-select"]').inputValue(), { timeout: 60_000 })
      .toBe('local');
    await page.locator('[data-testid="env-select"]').selectOption('func_trace');
    await page.locator('[data-testid="policy-select"]').selectOption('expert');
    await page.locator('[data-testid="run-episode"]').click();
    await page.locator('[data-testid="episode-panel"][data-phase="done"]').waitFor({ timeout: 90_000 });
    const js = page.locator('[data-testid="tool-call"]', { has: page.locator('code.name', { hasText: /^js$/ }) });
    await expect.poll(() => js.count()).toBeGreaterThan(0);
    expect(await js.last().locator('.status').textContent()).toBe('ok');
    expect(Number(await page.locator('[data-testid="combined-score"]').textContent())).toBeGreaterThan(0.5);
    expect(app.errors).toEqual([]);
  });
});
