/**
 * Playground → Trajectories in the built app: run an episode with the scripted expert through the
 * real agent loop and sandbox, see it judged, find it in the trajectory explorer with its steps,
 * and find it again after a reload (IndexedDB).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApp, type App } from './harness.ts';

describe('playground and trajectories screens', () => {
  let app: App;
  beforeAll(async () => {
    app = await openApp('/#playground');
  });
  afterAll(async () => {
    await app?.close();
  });

  it('runs an episode live and shows the tool call, the answer and the judges', async () => {
    const { page } = app;
    // A first visit picks the local model; the scripted expert is the one that reliably calls a tool.
    await expect
      .poll(() => page.locator('[data-testid="policy-select"]').inputValue(), { timeout: 60_000 })
      .toBe('local');
    // The chosen policy's label is shown whole in the select (the model line under it says the rest).
    const policy = page.locator('[data-testid="policy-select"]');
    expect((await policy.locator('option[value="local"]').textContent())?.trim()).toBe('Local model (spindle-base)');
    const [scroll, client] = await policy.evaluate((el) => [el.scrollWidth, el.clientWidth]);
    expect(scroll).toBeLessThanOrEqual(client);
    await page.locator('[data-testid="policy-select"]').selectOption('expert');
    await page.locator('[data-testid="run-episode"]').click();
    await page.locator('[data-testid="episode-panel"][data-phase="done"]').waitFor({ timeout: 60_000 });
    expect(await page.locator('[data-testid="tool-call"]').count()).toBeGreaterThan(0);
    expect((await page.locator('[data-testid="final-answer"]').textContent())?.trim().length).toBeGreaterThan(12);
    expect(Number(await page.locator('[data-testid="combined-score"]').textContent())).toBeGreaterThan(0.5);
    await page.screenshot({ path: 'docs/screenshots/playground.png' });
    expect(app.errors).toEqual([]);
  });

  it('lists the stored episode, opens its steps, and keeps it across a reload', async () => {
    const { page } = app;
    await page.locator('[data-testid="tab-trajectories"]').click();
    await expect
      .poll(() => page.locator('[data-testid="trajectory-count"]').textContent(), { timeout: 20_000 })
      .toMatch(/^1 trajectories/);
    await page.locator('[data-testid="trajectory-row"]').first().click();
    await page.locator('[data-testid="trajectory-detail"] [data-testid="tool-call"]').first().waitFor();
    await page.locator('[data-testid="show-tokens"]').click();
    expect(await page.locator('[data-testid="token-pieces"] .tok.trained').count()).toBeGreaterThan(0);
    await page.screenshot({ path: 'docs/screenshots/trajectories.png' });

    await page.reload();
    await expect
      .poll(() => page.locator('[data-testid="trajectory-count"]').textContent(), { timeout: 20_000 })
      .toMatch(/^1 trajectories/);
    await page.locator('[data-testid="trajectory-search"]').fill('no such text anywhere');
    await expect.poll(() => page.locator('[data-testid="trajectory-count"]').textContent()).toMatch(/^0 trajectories/);
    expect(app.errors).toEqual([]);
  });
});
