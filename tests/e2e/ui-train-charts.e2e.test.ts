/**
 * The Train screen's charts as a W&B user reads them, on a (simulated, `?demo`) run: held-out success
 * reads counts with their interval, the reward curve is smoothed with its raw curve kept, the step axis
 * is ticked in whole numbers, the KL chart says KL is off when β is 0, and an empty chart's placeholder
 * has no gridlines drawn through it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApp, type App } from './harness.ts';

const COUNT = /^\d+\/8 = \d+% \[\d+, \d+\]$/;

describe('train charts', () => {
  let app: App;
  beforeAll(async () => {
    app = await openApp('/?demo#train');
  });
  afterAll(async () => {
    await app?.close();
  });

  it('before a run: KL off at β = 0, and no plot drawn under a placeholder', async () => {
    const { page } = app;
    const kl = page.locator('[data-testid="chart-KL to reference"]');
    await expect.poll(() => kl.locator('.empty').textContent()).toMatch(/^KL off \(β = 0\)/);
    const loss = page.locator('[data-testid="chart-Loss"]');
    expect(await loss.locator('.empty').isVisible()).toBe(true);
    // The plot (its gridlines and axes) is hidden while the placeholder shows.
    expect(await loss.locator('.uplot').isVisible()).toBe(false);
  });

  it('after a run: counts on held-out success, the raw reward beside the smoothed one, whole-number steps', async () => {
    const { page } = app;
    await page.locator('[data-testid="start-run"]').click();
    await expect
      .poll(() => page.locator('[data-testid="run-status"]').textContent(), { timeout: 60_000 })
      .toBe('finished');
    const heldOut = page.locator('[data-testid="chart-Held-out success"]');
    const values = heldOut.locator('[data-testid="chart-value"]');
    // One entry per environment (the band edges are not listed), each read as counts: the default preset has one.
    expect(await values.count()).toBe(1);
    expect(await values.first().textContent()).toMatch(COUNT);

    // Hovering a column reads that evaluation's counts.
    const over = heldOut.locator('.u-over');
    const box = (await over.boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.3, box.y + box.height / 2);
    await expect.poll(() => heldOut.locator('[data-testid="chart-step"]').textContent()).toMatch(/step\s+\d+/);
    expect(await values.first().textContent()).toMatch(COUNT);
    await page.mouse.move(0, 0);

    const reward = page.locator('[data-testid="chart-Reward"]');
    expect(await reward.locator('.legend').textContent()).toContain('reward (raw)');
    const ticks = (await reward.getAttribute('data-step-ticks'))!.split(' ').filter(Boolean);
    expect(ticks.length).toBeGreaterThan(1);
    for (const t of ticks) expect(t).toMatch(/^\d+$/);

    // Smoothing off: the raw curve alone.
    await page.locator('[data-testid="reward-smoothing"]').fill('0');
    await expect.poll(() => reward.locator('.legend').textContent()).not.toContain('(raw)');
    expect(app.errors).toEqual([]);
  });
});
