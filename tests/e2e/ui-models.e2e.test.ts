/**
 * Models & export in the built app: export the stored trajectories as chat JSONL and parse the
 * download; import a PEFT adapter, export it back as a zip and parse that; a corrupt dataset file
 * gets a clear error beside its button; deleting a run empties the list.
 */
import { readFileSync } from 'node:fs';
import { unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zipFiles } from '../../src/export/peft.ts';
import { readSafetensors, writeSafetensors } from '../../src/model/safetensors.ts';
import { openApp, type App } from './harness.ts';

const R = 2;
function tinyAdapter(): Buffer {
  const key = (ab: 'A' | 'B') => `base_model.model.model.layers.0.self_attn.q_proj.lora_${ab}.weight`;
  const tensors = new Map([
    [key('A'), { shape: [R, 4], data: Float32Array.from({ length: R * 4 }, (_, i) => i / 10) }],
    [key('B'), { shape: [4, R], data: new Float32Array(4 * R) }],
  ]);
  const config = { peft_type: 'LORA', task_type: 'CAUSAL_LM', r: R, lora_alpha: 4, target_modules: ['q_proj'], base_model_name_or_path: 'spindle-micro' };
  const files = new Map([
    ['adapter_config.json', new TextEncoder().encode(JSON.stringify(config))],
    ['adapter_model.safetensors', writeSafetensors(tensors, { format: 'pt' })],
  ]);
  return Buffer.from(zipFiles(files));
}

describe('models and export screen', () => {
  let app: App;
  beforeAll(async () => {
    app = await openApp('/#playground');
    await app.page.locator('[data-testid="run-episode"]').click();
    await app.page.locator('[data-testid="episode-panel"][data-phase="done"]').waitFor({ timeout: 60_000 });
    await app.page.locator('[data-testid="tab-models"]').click();
  });
  afterAll(async () => { await app?.close(); });

  it('exports the trajectories as chat JSONL that parses', async () => {
    const { page } = app;
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('[data-testid="export-dataset-jsonl"]').click()]);
    const lines = readFileSync((await download.path())!, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(1);
    const row = JSON.parse(lines[0]) as { messages: { role: string }[] };
    expect(row.messages.map((m) => m.role)).toContain('assistant');
  });

  it('imports a PEFT adapter and exports it back as a zip with the same tensors', async () => {
    const { page } = app;
    await page.locator('[data-testid="import-adapter"]').setInputFiles({ name: 'adapter.zip', mimeType: 'application/zip', buffer: tinyAdapter() });
    await page.locator('[data-testid="export-adapter"]').first().waitFor({ timeout: 20_000 });
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('[data-testid="export-adapter"]').first().click()]);
    const files = unzipSync(new Uint8Array(readFileSync((await download.path())!)));
    const config = JSON.parse(new TextDecoder().decode(files['adapter_config.json'])) as { peft_type: string; r: number };
    expect(config).toMatchObject({ peft_type: 'LORA', r: R });
    const weights = readSafetensors(files['adapter_model.safetensors']);
    const a = weights.tensors.get('base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight')!;
    expect(a.shape).toEqual([R, 4]);
    expect(a.data[3]).toBeCloseTo(0.3);
    await page.screenshot({ path: 'docs/screenshots/models.png' });
  });

  it('shows a corrupt dataset import error beside its button and adds nothing', async () => {
    const { page } = app;
    await page.locator('[data-testid="import-dataset"]').setInputFiles({ name: 'broken.jsonl', mimeType: 'application/jsonl', buffer: Buffer.from('{"messages": [oops\n') });
    const error = page.locator('[data-testid="job-error"]');
    await error.waitFor({ timeout: 20_000 });
    expect(await error.textContent()).toContain('broken.jsonl');
  });

  it('deletes a run after confirmation', async () => {
    const { page } = app;
    const before = await page.locator('[data-testid="stored-run"]').count();
    await page.locator('[data-testid="stored-run"]').filter({ hasText: 'playground' }).getByRole('button', { name: /Delete run/ }).click();
    await page.getByRole('button', { name: 'Delete for good' }).click();
    await expect.poll(() => page.locator('[data-testid="stored-run"]').count()).toBe(before - 1);
    expect(app.errors).toEqual([]);
  });
});
