/**
 * The Playground's sampled group (`?demo`): a row per sample, a column per turn, so turn k of every
 * sample lines up in one column and the page stays about a screen tall; a cell opens its turn in full.
 * And the model line says the local model loads with the first episode, then that it is ready.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApp, type App } from './harness.ts';

/** Each group cell's sample row, turn index, left edge and top, as drawn. */
async function cellBoxes(app: App, scope: string) {
  return app.page.locator(`${scope} [data-testid="group-cell"]`).evaluateAll((els) =>
    els.map((e) => ({
      row: Number((e as HTMLElement).dataset.row),
      turn: Number((e as HTMLElement).dataset.turn),
      x: Math.round(e.getBoundingClientRect().left),
      top: Math.round(e.getBoundingClientRect().top),
    })),
  );
}

/** Turn k of every sample has the same x, on its own sample's row, and the columns run left to right. */
async function expectTurnsInColumns(app: App, scope: string): Promise<number> {
  const rowTops = await app.page
    .locator(`${scope} [data-testid="group-row"]`)
    .evaluateAll((els) => els.map((e) => Math.round(e.getBoundingClientRect().top)));
  const cells = await cellBoxes(app, scope);
  const turns = Math.max(...cells.map((c) => c.turn)) + 1;
  const columnX: number[] = [];
  for (let k = 0; k < turns; k++) {
    const column = cells.filter((c) => c.turn === k);
    expect(new Set(column.map((c) => c.x)).size, `turn ${k + 1}`).toBe(1);
    for (const c of column) expect(c.top, `sample ${c.row + 1} turn ${k + 1}`).toBe(rowTops[c.row]);
    columnX.push(column[0].x);
  }
  expect(columnX).toEqual([...columnX].sort((a, b) => a - b));
  expect(new Set(columnX).size).toBe(turns);
  // Every sample starts with turn 1.
  expect(cells.filter((c) => c.turn === 0).length).toBe(rowTops.length);
  return turns;
}

describe('playground group table', () => {
  let app: App;
  beforeAll(async () => {
    app = await openApp('/?demo#playground');
  });
  afterAll(async () => {
    await app?.close();
  });

  it('lines up turn k of every sample in one column, opens a cell in full, and says the model loading then ready', async () => {
    const { page } = app;
    const model = page.locator('[data-testid="playground-model"]');
    await expect.poll(() => model.textContent(), { timeout: 30_000 }).toMatch(/\(loads with the first episode\)$/);
    const name = (await model.textContent())!
      .replace(/^\s*Model:\s*/, '')
      .replace(/ \(loads with the first episode\)$/, '');
    // Every text the model line shows is recorded as the page changes it.
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { modelSeen: string[] }).modelSeen = seen;
      new MutationObserver(() => {
        const text = document.querySelector('[data-testid="playground-model"]')?.textContent?.trim();
        if (text && seen.at(-1) !== text) seen.push(text);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    expect(await page.locator('[data-testid="policy-select"]').inputValue()).toBe('local');
    await page.locator('[data-testid="sample-group"]').click();
    await page.locator('[data-testid="group-stats"]').waitFor({ timeout: 60_000 });

    const rows = page.locator('[data-testid="group-row"]');
    expect(await rows.count()).toBe(4);
    expect(await expectTurnsInColumns(app, '[data-testid="group"]')).toBeGreaterThan(1);

    // Four samples read in about a screen, not a tall stack of narrow columns.
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    expect(height).toBeLessThan(1300);

    const first = page.locator('[data-testid="group-cell"][data-row="1"][data-turn="0"]');
    await first.click();
    const detail = page.locator('[data-testid="group-turn-detail"]');
    await detail.waitFor();
    expect(await detail.locator('[data-testid="turn"]').getAttribute('data-turn')).toBe('0');
    expect(await detail.locator('[data-testid="tool-call"]').count()).toBeGreaterThan(0);
    expect(await first.getAttribute('aria-expanded')).toBe('true');
    await page.screenshot({ path: 'docs/screenshots/playground-group.png', fullPage: true });
    await first.click();
    await detail.waitFor({ state: 'detached' });

    const seen = await page.evaluate(() => (window as unknown as { modelSeen: string[] }).modelSeen);
    const loading = seen.indexOf(`Model: loading ${name}…`);
    expect(loading, seen.join(' | ')).toBeGreaterThanOrEqual(0);
    expect(seen.indexOf(`Model: ${name} ready`), seen.join(' | ')).toBeGreaterThan(loading);
    expect(app.errors).toEqual([]);
  });

  it("shows a stored trajectory's group in the same table, the opened sample marked", async () => {
    const { page } = app;
    await page.locator('[data-testid="tab-trajectories"]').click();
    await page.locator('[data-testid="trajectory-row"]').first().click();
    const show = page.locator('[data-testid="show-group"]');
    await show.click();
    const size = Number(/\((\d+)\)/.exec((await show.textContent())!)![1]);
    const detail = '[data-testid="trajectory-detail"]';
    expect(await page.locator(`${detail} [data-testid="group-row"]`).count()).toBe(size);
    expect(await page.locator(`${detail} [data-testid="group-row"].current`).count()).toBe(1);
    await expectTurnsInColumns(app, detail);
    await page.screenshot({ path: 'docs/screenshots/trajectories-group.png' });
    expect(app.errors).toEqual([]);
  });
});
