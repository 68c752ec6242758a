/**
 * Check and Save on the Environments screen (`?demo`) say that they are working: a spinner with the
 * check's step number and the part under way, then "Saving…". Every text the busy line showed is
 * recorded as the page changes it, so nothing depends on when the test looks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApp, type App } from './harness.ts';

describe('environments busy state', () => {
  let app: App;
  beforeAll(async () => {
    app = await openApp('/?demo#environments');
  });
  afterAll(async () => {
    await app?.close();
  });

  it('shows the check’s steps and the save while they run', async () => {
    const { page } = app;
    await page.locator('[data-testid="env-example"]').click();
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { busySeen: string[] }).busySeen = seen;
      new MutationObserver(() => {
        const text = document.querySelector('[data-testid="env-busy"]')?.textContent?.trim();
        if (text && seen.at(-1) !== text) seen.push(text);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await page.locator('[data-testid="env-check-button"]').click();
    await page.locator('[data-testid="env-check"][data-phase="passed"]').waitFor({ timeout: 30_000 });
    await page.locator('[data-testid="env-save"]').click();
    await page.locator('[data-testid="env-note"]').waitFor({ timeout: 30_000 });
    const seen = await page.evaluate(() => (window as unknown as { busySeen: string[] }).busySeen);
    expect(seen).toContain('Checking: step 1 — sampling 5 tasks…');
    expect(seen).toContain('Checking: step 2 — level 1: running the expert…');
    expect(seen.at(-1)).toBe('Saving…');
    expect(await page.locator('[data-testid="env-busy"]').count()).toBe(0);
    expect(app.errors).toEqual([]);
  });
});
