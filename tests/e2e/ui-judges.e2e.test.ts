/** Judges screen: an unreachable judge URL and a corrupt calibration file each get a clear message in place. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApp, type App } from './harness.ts';

describe('judges screen', () => {
  let app: App;
  beforeAll(async () => {
    app = await openApp('/#judges');
  });
  afterAll(async () => {
    await app?.close();
  });

  it('saves a remote judge with a key, says where the key lives, and reports an unreachable URL', async () => {
    const { page } = app;
    await page.locator('[data-testid="add-remote-judge"]').click();
    const card = page.locator('[data-testid="remote-judge"]').first();
    await card.locator('[data-testid="judge-url"]').fill('http://127.0.0.1:9/v1');
    await card.locator('[data-testid="judge-key"]').fill('sk-test');
    await card.locator('[data-testid="save-judge"]').click();
    await card.locator('[data-testid="forget-key"]').waitFor();
    expect(await card.textContent()).toContain('kept only in this browser');
    await card.locator('[data-testid="test-connection"]').click();
    const error = card.locator('[data-testid="connection-error"]');
    await error.waitFor({ timeout: 20_000 });
    expect(await error.textContent()).toContain('Could not reach http://127.0.0.1:9/v1');

    await page.reload();
    await page.locator('[data-testid="remote-judge"] [data-testid="forget-key"]').click();
    await page.locator('[data-testid="remote-judge"] [data-testid="forget-key"]').waitFor({ state: 'detached' });
  });

  it('lists the bad lines of a corrupt calibration file and does not run on it', async () => {
    const { page } = app;
    await page.locator('[data-testid="calibration-file"]').setInputFiles({
      name: 'labels.jsonl',
      mimeType: 'application/jsonl',
      buffer: Buffer.from('{"gold": 2}\nnot json\n'),
    });
    const errors = page.locator('[data-testid="calibration-file-errors"]');
    await errors.waitFor();
    expect(await errors.textContent()).toContain('line 1');
    expect(await errors.textContent()).toContain('line 2: not valid JSON');
    expect(await page.locator('[data-testid="run-calibration"]').isDisabled()).toBe(true);
    await page.screenshot({ path: 'docs/screenshots/judges.png' });
  });
});
