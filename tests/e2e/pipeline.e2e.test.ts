/**
 * The pipeline in the built app: a short GRPO run started from the Train screen runs in the engine
 * web worker with two nested rollout web workers; events stream into the screen; a reload mid-run
 * keeps every stored trajectory, brings the run's config back into the form and offers Resume, which
 * continues after the last completed update (a checkpoint is taken after every one) with the charts'
 * history, adding trajectories rather than redoing them; the Playground's local model then plays an
 * episode through the engine.
 *
 * The base model is a tiny HF-layout model written next to the built app (dist/e2e-model/), so the
 * test does not depend on the shipped model being trained; wasm is forced (SwiftShader WebGPU is ~20× slower).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/kernels/backend.ts';
import { ByteTokenizer } from '../../src/tokenizer/byte-tokenizer.ts';
import { presetConfig } from '../../src/model/config.ts';
import { saveModel } from '../../src/hub/hf.ts';
import { TransformerModel } from '../../src/model/transformer.ts';
import { openApp, type App } from './harness.ts';

const MODEL_DIR = 'dist/e2e-model';

const RUN_YAML = `name: e2e-run
seed: 3
model:
  base_model: /e2e-model
lora:
  r: 2
  alpha: 4
  target_modules: [q_proj, v_proj]
training:
  max_steps: 12
  batch_size: 1
  group_size: 2
  eval_interval: 10
sampling:
  max_new_tokens: 16
safety:
  enabled: false
trajectory_collection:
  n_workers: 2
  max_steps_per_trajectory: 1
tasks:
  environments: [arith_tool]
  eval_items: 1
`;

async function writeTinyModel(): Promise<void> {
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
  mkdirSync(MODEL_DIR, { recursive: true });
  for (const [name, bytes] of await saveModel(model, new ByteTokenizer())) writeFileSync(`${MODEL_DIR}/${name}`, bytes);
  model.dispose();
}

const progressNote = (app: App) => app.page.locator('[data-testid="run-progress"] .note').textContent();
const doneUpdates = async (app: App) => Number(/^(\d+)\//.exec((await progressNote(app)) ?? '')?.[1] ?? 0);

describe('a training run in web workers', () => {
  let app: App;
  beforeAll(async () => {
    await writeTinyModel();
    app = await openApp('/?backend=wasm#train');
  });
  afterAll(async () => {
    await app?.close();
    rmSync(MODEL_DIR, { recursive: true, force: true });
  });

  it('starts from the Train screen and streams events from the engine and rollout web workers', async () => {
    const { page } = app;
    await page.locator('[data-testid="backend"] strong[data-backend="wasm"]').waitFor({ timeout: 60_000 });
    await page.locator('[data-testid="yaml-view"]').click();
    await page.locator('[data-testid="yaml-editor"]').fill(RUN_YAML);
    await expect.poll(() => page.locator('[data-testid="config-validity"]').textContent()).toBe('valid');
    await page.locator('[data-testid="start-run"]').click();

    await expect
      .poll(() => page.locator('[data-testid="run-status"]').textContent(), { timeout: 60_000 })
      .toBe('running');
    expect(await page.locator('[data-testid="run-backend"]').textContent()).toBe('wasm');
    // The engine and its two nested rollout workers are real web workers of this page.
    await expect
      .poll(
        () =>
          page
            .workers()
            .map((w) => w.url())
            .filter((u) => /rollout\.worker/.test(u)).length,
        { timeout: 30_000 },
      )
      .toBe(2);
    expect(page.workers().some((w) => /engine\.worker/.test(w.url()))).toBe(true);
    // A progress event (after the first update) and the update's metrics reach the screen.
    await expect.poll(() => doneUpdates(app), { timeout: 120_000 }).toBeGreaterThanOrEqual(1);
    expect(await page.locator('[data-testid="chart-Reward"] .empty').count()).toBe(0);
    expect(app.errors).toEqual([]);
  });

  it('keeps the trajectories across a reload mid-run and resumes the run to completion', async () => {
    const { page } = app;
    const doneBefore = await doneUpdates(app);
    expect(doneBefore).toBeLessThan(12);
    await page.reload();

    await page.locator('[data-testid="tab-trajectories"]').click();
    await expect
      .poll(
        async () =>
          Number(/^(\d+)/.exec((await page.locator('[data-testid="trajectory-count"]').textContent()) ?? '')?.[1] ?? 0),
        { timeout: 20_000 },
      )
      .toBeGreaterThanOrEqual(2 * doneBefore);

    await page.locator('[data-testid="tab-train"]').click();
    const offer = page.locator('[data-testid="interrupted-run"]');
    await offer.waitFor({ timeout: 20_000 });
    expect(await offer.textContent()).toContain('e2e-run');
    // The checkpoint of the last finished update is where Resume continues, and the form shows the run's config.
    const resumeAt = Number(/continues after update (\d+)/.exec((await offer.textContent()) ?? '')?.[1] ?? -1);
    expect(resumeAt).toBeGreaterThanOrEqual(doneBefore);
    await page.locator('[data-testid="yaml-view"]').click();
    expect(await page.locator('[data-testid="yaml-editor"]').inputValue()).toContain('name: e2e-run');
    const seen: number[] = [];
    await offer.locator('[data-testid="resume-interrupted"]').click();
    await expect
      .poll(() => page.locator('[data-testid="run-status"]').textContent(), { timeout: 60_000 })
      .toBe('running');
    // While the run trains, the Trajectories list shows stored rows, not loading placeholders.
    await page.locator('[data-testid="tab-trajectories"]').click();
    await page.locator('[data-testid="trajectory-row"]').first().waitFor({ timeout: 30_000 });
    await page.locator('[data-testid="tab-train"]').click();
    await expect
      .poll(
        async () => {
          seen.push(await doneUpdates(app));
          return page.locator('[data-testid="run-status"]').textContent();
        },
        { timeout: 150_000 },
      )
      .toBe('finished');
    expect(await progressNote(app)).toMatch(/^12\/12 updates/);
    // The update counter went on from the checkpoint, never back to the start.
    expect(Math.min(...seen)).toBeGreaterThanOrEqual(resumeAt);
    expect(await page.locator('[data-testid="interrupted-run"]').count()).toBe(0);
    // The charts hold the updates from before the reload as well as after (one reward point per update).
    expect(await page.locator('[data-testid="chart-Reward"]').getAttribute('data-points')).toBe('12');
    // The README's Train screenshot is this real run (engine and rollout workers, not ?demo).
    await page.screenshot({ path: 'docs/screenshots/train.png' });

    // 12 updates × 1 group × 2 samples, each stored exactly once, plus the held-out episodes of the
    // evaluations before the first update and at updates 10 and 12 (1 item each), stored under split test.
    await page.locator('[data-testid="tab-trajectories"]').click();
    await expect
      .poll(() => page.locator('[data-testid="trajectory-count"]').textContent(), { timeout: 20_000 })
      .toMatch(/^27 trajectories/);
    expect(app.errors).toEqual([]);
  });

  it('plays a playground episode with the local model in the engine, streaming its text', async () => {
    const { page } = app;
    await page.locator('[data-testid="tab-playground"]').click();
    const local = page.locator('[data-testid="policy-select"] option[value="local"]');
    await expect.poll(() => local.isDisabled(), { timeout: 20_000 }).toBe(false);
    expect(await local.textContent()).toContain('e2e-run');
    await page.locator('[data-testid="policy-select"]').selectOption('local');
    await page.locator('[data-testid="run-episode"]').click();
    const panel = page.locator('[data-testid="episode-panel"][data-phase="done"]');
    await panel.waitFor({ timeout: 60_000 });
    // Sampled by the model of the run just trained, in the engine; no failure notice.
    expect(Number(/(\d+) tokens/.exec((await panel.locator('.meta').textContent()) ?? '')?.[1] ?? 0)).toBeGreaterThan(
      0,
    );
    expect(await panel.locator('[role="alert"]').count()).toBe(0);
    expect(app.errors).toEqual([]);
  });
});
