/**
 * Before its first update a (simulated, `?demo`) run evaluates the base on held-out items, and the run
 * controls say so: items done of total on the bar and in words, not a silent "waiting for the first
 * update…".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApp, type App } from './harness.ts';

describe('train progress', () => {
  let app: App;
  beforeAll(async () => {
    app = await openApp('/?demo#train');
  });
  afterAll(async () => {
    await app?.close();
  });

  it('shows the baseline evaluation’s items done of total before the first update', async () => {
    const { page } = app;
    const progress = page.locator('[data-testid="run-progress"]');
    await page.locator('[data-testid="start-run"]').click();
    // Text and bar read in one snapshot, so the run cannot move on between the two.
    const snapshot = () =>
      progress.evaluate(
        (el) => `${el.textContent} | max ${el.querySelector('[role="progressbar"]')?.getAttribute('aria-valuemax')}`,
      );
    await expect
      .poll(snapshot, { timeout: 60_000 })
      .toMatch(
        /^\s*Baseline evaluation\s*held-out evaluation before the first update: arith_tool \d\/8 items.* \| max 8$/,
      );
    await expect
      .poll(() => page.locator('[data-testid="run-status"]').textContent(), { timeout: 60_000 })
      .toBe('finished');
    expect(await progress.textContent()).toMatch(/\d+\/\d+ updates/);
    expect(app.errors).toEqual([]);
  });
});
