/**
 * Before its first update a (simulated, `?demo`) run evaluates the base on held-out items, and the run
 * controls say so: items done of total on the bar and in words, not a silent "waiting for the first
 * update…"; and the model line says it is loading while the run starts, then that it is ready, then what became of it.
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

  it('shows the model loading, then ready, and the baseline evaluation’s items done of total before the first update', async () => {
    const { page } = app;
    const progress = page.locator('[data-testid="run-progress"]');
    // Every text the model line shows is recorded as the page changes it.
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { modelSeen: string[] }).modelSeen = seen;
      new MutationObserver(() => {
        const text = document.querySelector('[data-testid="run-model"]')?.textContent?.trim();
        if (text && seen.at(-1) !== text) seen.push(text);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    const model = (await page.locator('[data-testid="run-model"]').textContent())!.trim();
    expect(model).toMatch(/\(loads when a run starts\)$/);
    const base = model.replace(/ \(loads when a run starts\)$/, '');
    await page.locator('[data-testid="start-run"]').click();
    // Text and bar read in one snapshot, so the run cannot move on between the two.
    const snapshot = () =>
      progress.evaluate(
        (el) => `${el.textContent} | max ${el.querySelector('[role="progressbar"]')?.getAttribute('aria-valuemax')}`,
      );
    await expect
      .poll(snapshot, { timeout: 60_000 })
      .toMatch(
        /^\s*Baseline evaluation\s*held-out evaluation before the first update: func_trace \d\/8 items.* \| max 8$/,
      );
    await expect
      .poll(() => page.locator('[data-testid="run-status"]').textContent(), { timeout: 60_000 })
      .toBe('finished');
    expect(await progress.textContent()).toMatch(/\d+\/\d+ updates/);
    // Once the run is over the line says what became of the model, not that it loads when a run starts.
    expect((await page.locator('[data-testid="run-model"]').textContent())!.trim()).toBe(
      `${base} (the run is over: its trained copy is the Playground’s policy; the next run loads the base again)`,
    );
    const seen = await page.evaluate(() => (window as unknown as { modelSeen: string[] }).modelSeen);
    // Loading first, then ready (other texts may come between page load and the start, or after the run).
    const loading = seen.indexOf(`loading ${base}…`);
    expect(loading, seen.join(' | ')).toBeGreaterThanOrEqual(0);
    expect(seen.indexOf(`${base} ready`), seen.join(' | ')).toBeGreaterThan(loading);
    expect(app.errors).toEqual([]);
  });
});
