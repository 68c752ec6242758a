/** Learn screen: the guided GRPO step computes the group's mean, std and advantages. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApp, type App } from './harness.ts';

describe('learn screen', () => {
  let app: App;
  beforeAll(async () => { app = await openApp('/#learn'); });
  afterAll(async () => { await app?.close(); });

  it('walks to the advantages, which sum to zero', async () => {
    const { page } = app;
    expect(await page.locator('[data-testid="lesson-source"]').textContent()).toContain('Example numbers');
    for (let i = 0; i < 3; i++) await page.locator('[data-testid="lesson-next"]').click();
    const cells = await page.locator('[data-testid="lesson-advantages"] tbody tr td:last-child').allTextContents();
    const values = cells.map((c) => Number(c.replace('−', '-')));
    expect(values).toHaveLength(4);
    expect(Math.abs(values.reduce((a, b) => a + b, 0))).toBeLessThan(0.01);
    expect(values[0]).toBeGreaterThan(0);
    await page.screenshot({ path: 'docs/screenshots/learn.png' });
    expect(app.errors).toEqual([]);
  });
});
