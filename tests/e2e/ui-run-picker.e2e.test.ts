/**
 * One run picker on every screen that shows or exports a run (`?demo`): Train's comparison, the
 * Trajectories filter and the dataset export list runs by name, never by id, with no two labels alike;
 * a run picked on Train draws its held-out success dashed beside this run's, read as counts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApp, type App } from './harness.ts';

async function pickerOptions(app: App, testid: string) {
  const select = app.page.locator(`[data-testid="${testid}"]`);
  await expect.poll(() => select.locator('option').count()).toBeGreaterThan(1);
  return select
    .locator('option')
    .evaluateAll((options) =>
      options.map((o) => ({ value: (o as HTMLOptionElement).value, text: (o.textContent ?? '').trim() })),
    );
}

describe('run pickers', () => {
  let app: App;
  beforeAll(async () => {
    app = await openApp('/?demo#train');
  });
  afterAll(async () => {
    await app?.close();
  });

  it('list names, not ids, with no duplicate labels, on Train, Trajectories and Export', async () => {
    for (const [screen, testid] of [
      ['train', 'compare-run'],
      ['trajectories', 'trajectory-run'],
      ['models', 'export-run'],
    ] as const) {
      await app.page.goto(`${app.url}/?demo#${screen}`);
      const options = (await pickerOptions(app, testid)).filter((o) => o.value !== '');
      expect(options.length, screen).toBeGreaterThan(0);
      for (const o of options) expect(o.text, screen).not.toContain(o.value);
      const texts = options.map((o) => o.text);
      expect(new Set(texts).size, screen).toBe(texts.length);
    }
  });

  it("draws a compared run's held-out success beside this run's", async () => {
    const { page } = app;
    await page.goto(`${app.url}/?demo#train`);
    await pickerOptions(app, 'compare-run');
    await page.locator('[data-testid="compare-run"]').selectOption({ label: 'earlier-run' });
    const heldOut = page.locator('[data-testid="chart-Held-out success"]');
    await expect.poll(() => heldOut.getAttribute('data-points')).toBe('5');
    const legend = heldOut.locator('.legend');
    expect(await legend.textContent()).toContain('arith_tool · earlier-run');
    expect(await legend.textContent()).toContain('6/8 = 75%');
    await page.locator('[data-testid="compare-run"]').selectOption({ label: 'no other run' });
    await expect.poll(() => heldOut.getAttribute('data-points')).toBe('0');
    expect(app.errors).toEqual([]);
  });
});
