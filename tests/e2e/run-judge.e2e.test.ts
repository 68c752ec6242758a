/**
 * The in-browser ONNX judge in a browser run, with the run config as the one truth about judges:
 * ticking the Judges screen's switch writes the judge into the Train screen's config (Form and YAML),
 * calibration offers it, a run started from that config has the nested rollout web workers load it
 * from the app's own assets (model files and the ORT wasm emitted by Vite), every stored training
 * trajectory carries a vote from 'onnx-judge' beside the rule judge's, and the Playground shows both votes.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { initBackend } from '../../src/kernels/backend.ts';
import { ByteTokenizer } from '../../src/tokenizer/byte-tokenizer.ts';
import { presetConfig } from '../../src/model/config.ts';
import { saveModel } from '../../src/hub/hf.ts';
import { TransformerModel } from '../../src/model/transformer.ts';
import { openApp, type App } from './harness.ts';

const DIR = 'dist/e2e-model-judge';
const YAML = `name: judge-run
model:
  base_model: /e2e-model-judge
lora:
  r: 2
  alpha: 4
  target_modules: [q_proj]
training:
  max_steps: 1
  batch_size: 1
  group_size: 2
  checkpoint_every: 1
  eval_interval: 10
sampling:
  max_new_tokens: 8
safety:
  enabled: false
trajectory_collection:
  n_workers: 1
  max_steps_per_trajectory: 1
tasks:
  environments: [arith_tool]
  eval_items: 1
`;
let app: App;

beforeAll(async () => {
  await initBackend({ forced: 'wasm' });
  const model = TransformerModel.create(
    presetConfig('nano', 266, {
      numLayers: 1,
      hiddenSize: 32,
      intermediateSize: 64,
      numHeads: 2,
      numKvHeads: 1,
      headDim: 16,
    }),
    11,
  );
  mkdirSync(DIR, { recursive: true });
  for (const [name, bytes] of await saveModel(model, new ByteTokenizer())) writeFileSync(`${DIR}/${name}`, bytes);
  app = await openApp('/?backend=wasm#train');
});
afterAll(async () => {
  await app?.close();
  rmSync(DIR, { recursive: true, force: true });
});

it('puts the switched-on judge in the config, and an onnx-judge vote on every trajectory of the run and in the Playground', async () => {
  const { page } = app;
  await page.locator('[data-testid="yaml-view"]').click();
  await page.locator('[data-testid="yaml-editor"]').fill(YAML);
  await expect.poll(() => page.locator('[data-testid="config-validity"]').textContent()).toBe('valid');

  await page.locator('[data-testid="tab-judges"]').click();
  await page.locator('[data-testid="inbrowser-judge"]').check();
  expect(await page.locator('[data-testid="calibration-judge"] option').allTextContents()).toContain('onnx-judge');
  await page.locator('[data-testid="tab-train"]').click();
  await expect.poll(() => page.locator('[data-testid="form-judges"]').textContent()).toContain('onnx-judge (model)');
  await page.locator('[data-testid="yaml-view"]').click();
  expect(await page.locator('[data-testid="yaml-editor"]').inputValue()).toContain('id: onnx-judge');

  await page.locator('[data-testid="start-run"]').click();
  await expect
    .poll(() => page.locator('[data-testid="run-status"]').textContent(), { timeout: 120_000 })
    .toMatch(/finished|error|stopped/);
  const votes = await page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((res, rej) => {
      const r = indexedDB.open('spindle');
      r.onsuccess = () => res(r.result);
      r.onerror = () => rej(r.error);
    });
    const all = await new Promise<unknown[]>((res) => {
      const r = db.transaction('trajectories').objectStore('trajectories').getAll();
      r.onsuccess = () => res(r.result as unknown[]);
    });
    // Held-out evaluation episodes are scored by the environment alone; the configured judges vote on training ones.
    return all.filter((t) => (t as { split: string }).split === 'train').map((t) => (t as { votes: unknown[] }).votes);
  });
  expect(await page.locator('[data-testid="run-status"]').textContent()).toBe('finished');
  expect(votes.length).toBeGreaterThan(0);
  for (const list of votes) {
    const ids = (list as { judge_id: string; score: number | null }[]).map((v) => v.judge_id);
    // The judges' votes, then the environment's own (the verifier the gate reads), kept for the views.
    expect(ids).toEqual(['rule', 'onnx-judge', 'env:arith_tool']);
    const onnx = (list as { judge_id: string; score: number | null }[])[1].score;
    expect(onnx).toBeGreaterThanOrEqual(0);
    expect(onnx!).toBeLessThanOrEqual(1);
  }

  await page.locator('[data-testid="tab-playground"]').click();
  await page
    .locator('[data-testid="policy-select"] option[value="expert"]')
    .waitFor({ state: 'attached', timeout: 60_000 });
  await page.locator('[data-testid="policy-select"]').selectOption('expert');
  await page.locator('[data-testid="run-episode"]').click();
  await page.locator('[data-testid="episode-panel"][data-phase="done"]').waitFor({ timeout: 90_000 });
  await expect
    .poll(
      () =>
        page.locator('[data-testid="judge-vote"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-judge'))),
      { timeout: 60_000 },
    )
    .toEqual(['rule', 'onnx-judge', 'env:arith_tool']);
  expect(app.errors).toEqual([]);
});
