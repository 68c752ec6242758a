/**
 * A GRPO run finishes on WebGPU in the browser: two updates of a tiny config started from the
 * Train screen of a `?backend=webgpu` page (SwiftShader in headless Chromium, the slowest WebGPU there is)
 * run to 'finished' with no rollout worker taken for hung, and their metrics agree with a wasm run of the
 * same config in the same profile. The workers spend most of an episode waiting for the engine's tokens;
 * the watchdog does not count that time (src/pipeline/engine/worker-pool.ts).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { initBackend } from '../../src/kernels/backend.ts';
import { ByteTokenizer } from '../../src/tokenizer/byte-tokenizer.ts';
import { presetConfig } from '../../src/model/config.ts';
import { saveModel } from '../../src/hub/hf.ts';
import { TransformerModel } from '../../src/model/transformer.ts';
import { openApp, type App } from './harness.ts';

const MODEL_DIR = 'dist/e2e-webgpu-model';

const RUN_YAML = `name: webgpu-run
seed: 5
model:
  base_model: /e2e-webgpu-model
lora:
  r: 2
  alpha: 4
  target_modules: [q_proj, v_proj]
training:
  max_steps: 2
  batch_size: 1
  group_size: 4
  eval_interval: 10
  eval_at_start: false
sampling:
  max_new_tokens: 12
safety:
  enabled: false
trajectory_collection:
  n_workers: 2
  max_steps_per_trajectory: 1
tasks:
  environments: [arith_tool]
  eval_items: 1
`;

/**
 * A tiny model that ends its answer at once about a third of the time (its <|im_end|> embedding is a
 * scaled copy of every other token's, and its blocks write little into the residual stream): an empty
 * answer fails the rule judge's final-answer check, so a group's rewards differ and each update trains.
 */
async function writeTinyModel(): Promise<void> {
  await initBackend({ forced: 'wasm' });
  const tokenizer = new ByteTokenizer();
  const model = TransformerModel.create(
    presetConfig('nano', 266, {
      numLayers: 1,
      hiddenSize: 32,
      intermediateSize: 64,
      numHeads: 2,
      numKvHeads: 1,
      headDim: 16,
    }),
    13,
  );
  const weights = await model.getWeights();
  const embed = weights.get('model.embed_tokens.weight')!;
  const width = embed.shape[1];
  embed.data.forEach((x, i) => (embed.data[i] = 0.1 * (Math.floor(i / width) === tokenizer.imEndId ? 2.5 : 1) + x));
  for (const [name, tensor] of weights)
    if (/o_proj|down_proj/.test(name)) tensor.data.forEach((x, i) => (tensor.data[i] = 0.1 * x));
  model.setWeights(weights);
  mkdirSync(MODEL_DIR, { recursive: true });
  for (const [name, bytes] of await saveModel(model, tokenizer)) writeFileSync(`${MODEL_DIR}/${name}`, bytes);
  model.dispose();
}

type Metrics = Record<string, number>;

/** Fills the Train screen's YAML with `yaml` and starts the run. */
async function startRun(page: Page, yaml: string): Promise<void> {
  await page.locator('[data-testid="yaml-view"]').click();
  await page.locator('[data-testid="yaml-editor"]').fill(yaml);
  await expect.poll(() => page.locator('[data-testid="config-validity"]').textContent()).toBe('valid');
  await page.locator('[data-testid="start-run"]').click();
}

/** Starts RUN_YAML on `page` and waits for it to finish; returns what the run said went wrong and its stored metrics per update. */
async function runToTheEnd(page: Page, timeout: number): Promise<{ notices: string[]; metrics: Metrics[] }> {
  await startRun(page, RUN_YAML);
  await expect
    .poll(() => page.locator('[data-testid="run-status"]').textContent(), { timeout })
    .toMatch(/^(finished|error|stopped)$/);
  const notices = await page.locator('[role="alert"]').allTextContents();
  expect(await page.locator('[data-testid="run-status"]').textContent(), notices.join('\n')).toBe('finished');
  // The latest run's metrics records, straight from the store.
  const metrics = await page.evaluate(
    () =>
      new Promise<Record<string, number>[]>((resolve, reject) => {
        const open = indexedDB.open('spindle');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const all = open.result.transaction('metrics').objectStore('metrics').getAll();
          all.onsuccess = () => {
            const records = all.result as { run_id: string; step: number; metrics: Record<string, number> }[];
            const latest = records.reduce((a, b) => (b.run_id > a ? b.run_id : a), '');
            open.result.close();
            resolve(
              records
                .filter((r) => r.run_id === latest)
                .sort((a, b) => a.step - b.step)
                .map((r) => r.metrics),
            );
          };
        };
      }),
  );
  return { notices, metrics };
}

describe('a GRPO run on WebGPU', () => {
  let app: App;
  beforeAll(async () => {
    await writeTinyModel();
    app = await openApp('/?backend=webgpu#train');
  });
  afterAll(async () => {
    await app?.close();
    rmSync(MODEL_DIR, { recursive: true, force: true });
  });

  let webgpu = false;

  it('runs two updates to the end, and its metrics agree with a wasm run of the same config', async () => {
    const { page } = app;
    const backend = page.locator('[data-testid="backend"] strong');
    await backend.waitFor({ timeout: 60_000 });
    if ((await backend.getAttribute('data-backend')) !== 'webgpu') {
      console.warn(
        `WebGPU unavailable in this Chromium (the engine chose ${await backend.textContent()}); the WebGPU run is not checked.`,
      );
      return;
    }
    webgpu = true;
    const started = performance.now();
    const gpu = await runToTheEnd(page, 80_000);
    console.info(`WebGPU (SwiftShader): two updates in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    expect(await page.locator('[data-testid="run-backend"]').textContent()).toBe('webgpu');
    expect(gpu.notices.filter((n) => /hung|replaced/.test(n))).toEqual([]);
    expect(gpu.metrics).toHaveLength(2);
    // Each update trained (its group's rewards differed) on the GPU.
    for (const m of gpu.metrics) expect(m.frac_reward_zero_std).toBe(0);
    for (const m of gpu.metrics) expect(Number.isFinite(m['train/loss'])).toBe(true);

    const wasmPage = await app.context.newPage();
    await wasmPage.goto(`${app.url}/?backend=wasm#train`);
    await wasmPage.locator('[data-testid="backend"] strong[data-backend="wasm"]').waitFor({ timeout: 60_000 });
    const wasm = await runToTheEnd(wasmPage, 60_000);
    await wasmPage.close();
    expect(wasm.metrics).toHaveLength(2);
    // Same seeds, same episodes: the rewards are the same, the losses equal up to float rounding.
    for (const [step, m] of gpu.metrics.entries()) {
      const w = wasm.metrics[step];
      expect(Object.keys(m).sort()).toEqual(Object.keys(w).sort());
      for (const key of ['reward', 'rollout/success', 'completions/mean_length'])
        expect(m[key], `${key} at update ${step + 1}`).toBeCloseTo(w[key], 4);
      for (const key of ['train/loss', 'train/grad_norm', 'entropy'])
        expect(Math.abs(m[key] - w[key]), `${key} at update ${step + 1}`).toBeLessThan(1e-3 + 1e-3 * Math.abs(w[key]));
    }
    expect(app.errors).toEqual([]);
  });

  it("stops mid-rollout at once, though the update's rollouts would take minutes on SwiftShader", async () => {
    if (!webgpu) return;
    const { page } = app;
    // 16 episodes of up to 128 tokens, sampled one at a time at a few tokens a second: minutes of rollouts.
    const long = RUN_YAML.replace('max_steps: 2', 'max_steps: 20')
      .replace('group_size: 4', 'group_size: 8')
      .replace('batch_size: 1', 'batch_size: 2')
      .replace('max_new_tokens: 12', 'max_new_tokens: 128\n  temperature: 3');
    await startRun(page, long);
    await expect
      .poll(() => page.locator('[data-testid="run-status"]').textContent(), { timeout: 30_000 })
      .toBe('running');
    // The first episode has finished: the others are being sampled on the GPU now.
    await expect
      .poll(async () => Number(await page.locator('[data-testid="episodes-finished"]').textContent()), {
        timeout: 120_000,
      })
      .toBeGreaterThanOrEqual(1);
    expect(await page.locator('[data-testid="run-progress"] .note').textContent()).toContain(
      'waiting for the first update',
    );
    const clicked = performance.now();
    await page.locator('[data-testid="stop-run"]').click();
    await expect
      .poll(() => page.locator('[data-testid="run-status"]').textContent(), { timeout: 60_000, interval: 100 })
      .toBe('stopped');
    console.info(`WebGPU (SwiftShader): stopped ${((performance.now() - clicked) / 1000).toFixed(1)} s after Stop`);
    // Stopped inside the rollouts, not after them: no update finished and most of the 16 episodes never did.
    expect(await page.locator('[data-testid="run-progress"] .note').textContent()).not.toMatch(/updates · ETA/);
    expect(Number(await page.locator('[data-testid="episodes-finished"]').textContent())).toBeLessThan(16);
    expect(await page.locator('[data-testid="start-run"]').isDisabled()).toBe(false);
    expect(app.errors).toEqual([]);
  });
});
