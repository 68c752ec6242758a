/**
 * The Environments screen in the built app: load the example module, check it in the engine worker
 * (five sampled tasks, no problems), save it, break it (the error at its line), fix it, then find it in
 * the Playground's picker and play one expert episode of it to the end, judged.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApp, type App } from './harness.ts';

const EXAMPLE = readFileSync(new URL('../../examples/envs/treasure-hunt.js', import.meta.url), 'utf8');

describe('environments screen', () => {
  let app: App;
  beforeAll(async () => {
    app = await openApp('/#playground');
  });
  afterAll(async () => {
    await app?.close();
  });

  it('checks, saves, breaks and fixes the example, then plays it in the Playground', async () => {
    const { page } = app;
    // The Playground filled its picker before the environment existed: a later visit must list it.
    await expect
      .poll(() => page.locator('[data-testid="env-select"] option').count(), { timeout: 60_000 })
      .toBeGreaterThan(0);
    await page.locator('[data-testid="tab-environments"]').click();
    const editor = page.locator('[data-testid="env-editor"]');
    const report = page.locator('[data-testid="env-check"]');

    await page.locator('[data-testid="env-example"]').click();
    expect(await editor.inputValue()).toBe(EXAMPLE);
    await page.locator('[data-testid="env-check-button"]').click();
    await page.locator('[data-testid="env-check"][data-phase="passed"]').waitFor({ timeout: 30_000 });
    expect(await page.locator('[data-testid="env-sample"]').count()).toBe(5);
    expect(await page.locator('[data-testid="env-level"]').count()).toBe(4);
    // Each blind policy's result as counts with their 95% interval, as everywhere else in the app: "0/8 = 0% [0, 32]".
    for (const cell of await page.locator('[data-testid="env-level-blind"]').allTextContents())
      expect(cell).toMatch(/^\d+\/\d+ = \d+% \[\d+, \d+\] \(.+\)$/);
    expect(await report.locator('[data-testid="env-check-summary"]').textContent()).toContain('No problems');
    // The module ran in a host thread of its own, not in the engine's (src/envs/module-host.ts).
    expect(await page.locator('[data-testid="env-progress"]').textContent()).toContain(
      'loaded treasure_hunt: levels 1, 2, 3, 4; tools read_note, unlock; runs in a thread of its own',
    );
    await page.locator('[data-testid="env-save"]').click();
    await page.locator('[data-testid="env-entry"][data-name="treasure_hunt"]').waitFor();
    expect(await page.locator('[data-testid="env-entry"][data-name="treasure_hunt"] .badge').textContent()).toBe(
      'checked',
    );

    // A syntax error on line 50: the check names the line, highlights it and says why beside it.
    const lines = EXAMPLE.split('\n');
    lines[49] = `${lines[49]} {{`;
    await editor.fill(lines.join('\n'));
    await page.locator('[data-testid="env-check-button"]').click();
    await page.locator('[data-testid="env-check"][data-phase="failed"]').waitFor({ timeout: 30_000 });
    expect(await page.locator('[data-testid="env-editor-error-line"]').first().textContent()).toBe('line 50');
    expect(await page.locator('[data-testid="env-editor-error-band"]').getAttribute('data-line')).toBe('50');
    expect(await page.locator('[data-testid="env-editor-error-band"]').textContent()).toMatch(/SyntaxError/);
    await page.screenshot({ path: 'docs/screenshots/environments-error.png' });

    await editor.fill(EXAMPLE);
    await page.locator('[data-testid="env-check-button"]').click();
    await page.locator('[data-testid="env-check"][data-phase="passed"]').waitFor({ timeout: 30_000 });
    expect(await page.locator('[data-testid="env-editor-errors"] li').count()).toBe(0);
    await page.screenshot({ path: 'docs/screenshots/environments.png', fullPage: true });

    await page.locator('[data-testid="tab-playground"]').click();
    await expect
      .poll(() => page.locator('[data-testid="env-select"] option[value="treasure_hunt"]').count(), { timeout: 20_000 })
      .toBe(1);
    await page.locator('[data-testid="env-select"]').selectOption('treasure_hunt');
    await expect
      .poll(() => page.locator('[role="radiogroup"] .task').first().textContent(), { timeout: 20_000 })
      .toMatch(/Start at note n/);
    await expect
      .poll(() => page.locator('[data-testid="policy-select"] option[value="expert"]').count(), { timeout: 60_000 })
      .toBe(1);
    await page.locator('[data-testid="policy-select"]').selectOption('expert');
    await page.locator('[data-testid="run-episode"]').click();
    await page.locator('[data-testid="episode-panel"][data-phase="done"]').waitFor({ timeout: 45_000 });
    expect(await page.locator('[data-testid="tool-call"]').count()).toBe(2);
    expect(await page.locator('[data-testid="final-answer"]').textContent()).toMatch(/[a-z]+/);
    expect(Number(await page.locator('[data-testid="combined-score"]').textContent())).toBeGreaterThan(0.5);
    expect(app.errors).toEqual([]);
  });
});
