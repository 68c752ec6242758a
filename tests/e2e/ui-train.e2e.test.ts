/**
 * Train screen in the built app: YAML validated as you type with the error at its line, and a
 * (simulated, `?demo`) run streaming into the charts with progress, backend and tokens/s. Without
 * `?demo` runs go to the engine worker (tests/e2e/pipeline.e2e.test.ts runs one); a run that cannot
 * start must say why at the run controls. A preset changes only what it names.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApp, type App } from './harness.ts';

describe('train screen', () => {
  let app: App;
  beforeAll(async () => {
    app = await openApp('/?demo#train');
  });
  afterAll(async () => {
    await app?.close();
  });

  it('shows a YAML error at its line and keeps the text', async () => {
    const { page } = app;
    await page.locator('[data-testid="yaml-view"]').click();
    const editor = page.locator('[data-testid="yaml-editor"]');
    const original = await editor.inputValue();
    const broken = original.replace(/learning_rate: .*/, 'learning_rate: fast');
    await editor.fill(broken);
    await expect
      .poll(() => page.locator('[data-testid="yaml-editor-errors"]').textContent())
      .toContain('learning_rate');
    expect(await page.locator('[data-testid="yaml-editor-errors"] button').first().textContent()).toMatch(/^line \d+$/);
    expect(await page.locator('[data-testid="start-run"]').isDisabled()).toBe(true);
    expect(await editor.inputValue()).toBe(broken);
    await editor.fill(original);
    await expect.poll(() => page.locator('[data-testid="config-validity"]').textContent()).toContain('valid');
  });

  it('starts a run and the charts, progress and tokens/s update', async () => {
    const { page } = app;
    await page.locator('[data-testid="start-run"]').click();
    await expect
      .poll(() => page.locator('[data-testid="run-status"]').textContent(), { timeout: 60_000 })
      .toBe('finished');
    expect(await page.locator('[data-testid="run-backend"]').textContent()).toBe('wasm');
    expect(Number(await page.locator('[data-testid="tokens-per-second"]').textContent())).toBeGreaterThan(0);
    // Every chart drew its lines (the placeholder is gone) and kept its fixed height.
    const reward = page.locator('[data-testid="chart-Reward"]');
    expect(await reward.locator('.empty').count()).toBe(0);
    expect(await reward.locator('canvas').count()).toBe(1);
    expect((await reward.locator('.plot').boundingBox())?.height).toBe(150);
    expect(app.errors).toEqual([]);
  });

  it('without ?demo, a run whose model cannot load says why at the run controls', async () => {
    const page = await app.context.newPage();
    await page.goto(app.url + '/?backend=wasm#train');
    await page.locator('[data-testid="yaml-view"]').click();
    const editor = page.locator('[data-testid="yaml-editor"]');
    await editor.fill((await editor.inputValue()).replace(/base_model: .*/, 'base_model: no-such-model'));
    await expect.poll(() => page.locator('[data-testid="config-validity"]').textContent()).toBe('valid');
    await page.locator('[data-testid="start-run"]').click();
    await expect
      .poll(() => page.locator('[role="alert"]').first().textContent(), { timeout: 60_000 })
      .toContain('"no-such-model" cannot be loaded in the browser');
    expect(await page.locator('[data-testid="run-status"]').textContent()).toBe('error');
    expect(await page.locator('[data-testid="yaml-editor"]').inputValue()).toContain('no-such-model');
    await page.close();
  });

  it('a preset sets what it names and leaves the judge switched on and the other edits alone', async () => {
    const page = await app.context.newPage();
    await page.goto(app.url + '/?backend=wasm#judges');
    const inBrowser = page.locator('[data-testid="inbrowser-judge"]');
    await inBrowser.check();
    await page.goto(app.url + '/?backend=wasm#train');
    await page.locator('[data-testid="yaml-view"]').click();
    const editor = page.locator('[data-testid="yaml-editor"]');
    await expect.poll(() => editor.inputValue()).toContain('onnx-judge');
    await editor.fill((await editor.inputValue()).replace(/^(\s+)temperature: .*$/m, '$1temperature: 0.7'));
    await expect.poll(() => page.locator('[data-testid="config-validity"]').textContent()).toBe('valid');
    await page.getByRole('button', { name: 'Form', exact: true }).click();
    // The screen opens on the default preset (chain-calls, func_trace); another one replaces what it names.
    await page.locator('#preset').selectOption('watch-it-learn');
    await page.locator('[data-testid="yaml-view"]').click();
    await expect.poll(() => editor.inputValue()).toContain('name: watch-it-learn');
    const yaml = await editor.inputValue();
    expect(yaml).toContain('onnx-judge');
    expect(yaml).toMatch(/temperature: 0\.7/);
    expect(yaml).toMatch(/environments:\s*\[\s*arith_tool\s*\]|environments:\n\s*- arith_tool/);
    await page.goto(app.url + '/?backend=wasm#judges');
    await inBrowser.uncheck();
    await page.close();
  });
});
