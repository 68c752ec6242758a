/**
 * `npm start` never reloads a page by itself: the dev server, started with an empty dependency cache
 * (a first start after `npm ci`), serves a page that visits every screen and runs a training update
 * whose judges include the in-browser ONNX judge (onnxruntime-web and @huggingface/tokenizers load
 * in a rollout worker), and the page is never navigated again after its first load.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openDevApp, type DevApp } from './harness.ts';

const YAML = `name: dev-server-run
lora:
  r: 2
  alpha: 4
  target_modules: [q_proj]
training:
  max_steps: 1
  batch_size: 1
  group_size: 2
  eval_interval: 10
sampling:
  max_new_tokens: 8
safety:
  enabled: false
judge:
  judges:
    - type: rule
    - type: model
      id: onnx-judge
      path: models/judge
trajectory_collection:
  n_workers: 1
  max_steps_per_trajectory: 1
tasks:
  environments: [arith_tool]
  eval_items: 1
`;

let app: DevApp;
let loads = 0;

beforeAll(async () => {
  app = await openDevApp('/?backend=wasm#train');
  // 'load' fires on full page loads only (tab switches change the hash, which is no reload).
  app.page.on('load', () => loads++);
});
afterAll(async () => {
  await app?.close();
});

it('runs an update with the in-browser judge on the dev server without reloading the page', async () => {
  const { page } = app;
  await page.locator('[data-testid="yaml-view"]').waitFor({ timeout: 120_000 });
  // A mark on the window: a reload would drop it.
  await page.evaluate(() => {
    (window as unknown as { __loadedOnce: boolean }).__loadedOnce = true;
  });
  for (const tab of ['playground', 'trajectories', 'judges', 'models', 'learn', 'train']) {
    await page.locator(`[data-testid="tab-${tab}"]`).click();
  }
  await page.locator('[data-testid="yaml-view"]').click();
  await page.locator('[data-testid="yaml-editor"]').fill(YAML);
  await expect.poll(() => page.locator('[data-testid="config-validity"]').textContent()).toBe('valid');
  await page.locator('[data-testid="start-run"]').click();
  await expect
    .poll(() => page.locator('[data-testid="run-status"]').textContent(), { timeout: 200_000 })
    .toMatch(/finished|error|stopped/);
  expect(await page.locator('[data-testid="run-status"]').textContent()).toBe('finished');

  const judges = await page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((res, rej) => {
      const r = indexedDB.open('spindle');
      r.onsuccess = () => res(r.result);
      r.onerror = () => rej(r.error);
    });
    const all = await new Promise<unknown[]>((res) => {
      const r = db.transaction('trajectories').objectStore('trajectories').getAll();
      r.onsuccess = () => res(r.result as unknown[]);
    });
    return all
      .filter((t) => (t as { split: string }).split === 'train')
      .map((t) => (t as { votes: { judge_id: string }[] }).votes.map((v) => v.judge_id));
  });
  expect(judges.length).toBe(2);
  for (const ids of judges) expect(ids).toContain('onnx-judge');

  expect(await page.evaluate(() => (window as unknown as { __loadedOnce?: boolean }).__loadedOnce)).toBe(true);
  expect(loads).toBe(0);
  expect(app.serverLog.filter((line) => /reload/i.test(line))).toEqual([]);
  expect(app.errors).toEqual([]);
}, 420_000);
