/**
 * Models & export in the built app: export the stored trajectories as chat JSONL and parse the
 * download; import a PEFT adapter, export it back as a zip and parse that; a corrupt dataset file
 * gets a clear error beside its button; deleting a run empties the list. Then, in a fresh tab: import
 * a tiny Hugging Face-layout model from picked files (a corrupt one fails at the import control and
 * changes nothing), export an adapter merged into it and parse the zip's model.safetensors, and play
 * an episode with the imported model as the playground's local policy. Last, a model by hub id from a
 * hub served on 127.0.0.1: downloaded into Cache Storage, its card shown, and read from there after a reload.
 */
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zipFiles } from '../../src/export/peft.ts';
import { initBackend } from '../../src/kernels/backend.ts';
import { ByteTokenizer } from '../../src/tokenizer/byte-tokenizer.ts';
import { presetConfig } from '../../src/model/config.ts';
import { saveModel } from '../../src/hub/hf.ts';
import { readSafetensors, writeSafetensors } from '../../src/hub/safetensors.ts';
import { TransformerModel } from '../../src/model/transformer.ts';
import { openApp, type App } from './harness.ts';

const R = 2;
function tinyAdapter(width = 4, base = 'spindle-micro'): Buffer {
  const key = (ab: 'A' | 'B') => `base_model.model.model.layers.0.self_attn.q_proj.lora_${ab}.weight`;
  const tensors = new Map([
    [key('A'), { shape: [R, width], data: Float32Array.from({ length: R * width }, (_, i) => i / 10) }],
    [key('B'), { shape: [width, R], data: Float32Array.from({ length: width * R }, (_, i) => (i % 3) / 10) }],
  ]);
  const config = {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    r: R,
    lora_alpha: 4,
    target_modules: ['q_proj'],
    base_model_name_or_path: base,
  };
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
  afterAll(async () => {
    await app?.close();
  });

  it('exports the trajectories as chat JSONL that parses', async () => {
    const { page } = app;
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.locator('[data-testid="export-dataset-jsonl"]').click(),
    ]);
    const lines = readFileSync((await download.path())!, 'utf8')
      .trim()
      .split('\n');
    expect(lines).toHaveLength(1);
    const row = JSON.parse(lines[0]) as { messages: { role: string }[] };
    expect(row.messages.map((m) => m.role)).toContain('assistant');
  });

  it('imports a PEFT adapter and exports it back as a zip with the same tensors', async () => {
    const { page } = app;
    await page
      .locator('[data-testid="import-adapter"]')
      .setInputFiles({ name: 'adapter.zip', mimeType: 'application/zip', buffer: tinyAdapter() });
    await page.locator('[data-testid="export-adapter"]').first().waitFor({ timeout: 20_000 });
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.locator('[data-testid="export-adapter"]').first().click(),
    ]);
    const files = unzipSync(new Uint8Array(readFileSync((await download.path())!)));
    const config = JSON.parse(new TextDecoder().decode(files['adapter_config.json'])) as {
      peft_type: string;
      r: number;
    };
    expect(config).toMatchObject({ peft_type: 'LORA', r: R });
    const weights = readSafetensors(files['adapter_model.safetensors']);
    const a = weights.tensors.get('base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight')!;
    expect(a.shape).toEqual([R, 4]);
    expect(a.data[3]).toBeCloseTo(0.3);
    await page.screenshot({ path: 'docs/screenshots/models.png' });
  });

  it('shows a corrupt dataset import error beside its button and adds nothing', async () => {
    const { page } = app;
    await page.locator('[data-testid="import-dataset"]').setInputFiles({
      name: 'broken.jsonl',
      mimeType: 'application/jsonl',
      buffer: Buffer.from('{"messages": [oops\n'),
    });
    const error = page.locator('[data-testid="job-error"]');
    await error.waitFor({ timeout: 20_000 });
    expect(await error.textContent()).toContain('broken.jsonl');
  });

  it('deletes a run after confirmation', async () => {
    const { page } = app;
    const before = await page.locator('[data-testid="stored-run"]').count();
    await page
      .locator('[data-testid="stored-run"]')
      .filter({ hasText: 'playground' })
      .getByRole('button', { name: /Delete run/ })
      .click();
    await page.getByRole('button', { name: 'Delete for good' }).click();
    await expect.poll(() => page.locator('[data-testid="stored-run"]').count()).toBe(before - 1);
    expect(app.errors).toEqual([]);
  });
});

/** A one-layer Llama-layout model (hidden 32, byte tokenizer) as the files an HF folder holds. */
async function tinyHfModel(name: string): Promise<{ name: string; mimeType: string; buffer: Buffer }[]> {
  await initBackend({ forced: 'cpu' });
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
  const files = await saveModel(model, new ByteTokenizer());
  model.dispose();
  const config = { ...(JSON.parse(new TextDecoder().decode(files.get('config.json'))) as object), _name_or_path: name };
  return [
    { name: 'config.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(config)) },
    {
      name: 'model.safetensors',
      mimeType: 'application/octet-stream',
      buffer: Buffer.from(files.get('model.safetensors')!),
    },
  ];
}

describe('importing a Hugging Face model and exporting merged weights', () => {
  let app: App;
  beforeAll(async () => {
    app = await openApp('/#models');
  });
  afterAll(async () => {
    await app?.close();
  });

  it('imports picked files, refuses a corrupt model at the control, merges an adapter into it, and plays it locally', async () => {
    const { page } = app;
    const files = await tinyHfModel('tiny-e2e');
    const picker = page.getByLabel('or files');
    const importJob = page.locator('section[aria-label="Import"] [data-testid="job"]').first();

    await picker.setInputFiles(files);
    await page
      .locator('section[aria-label="Import"] [data-testid="job"][data-status="done"]')
      .waitFor({ timeout: 60_000 });
    expect(await importJob.textContent()).toContain('imported as tiny-e2e');

    // An unsupported architecture: the error shows beside the import control; the import stays.
    const gpt2 = Buffer.from(
      JSON.stringify({ ...(JSON.parse(files[0].buffer.toString()) as object), model_type: 'gpt2' }),
    );
    await picker.setInputFiles([{ ...files[0], buffer: gpt2 }, files[1]]);
    const error = page.locator('section[aria-label="Import"] [data-testid="job-error"]');
    await error.waitFor({ timeout: 30_000 });
    expect(await error.textContent()).toContain('model_type "gpt2"');

    // An adapter for the imported model, merged into it: HF layout whose weights parse.
    await page
      .locator('[data-testid="import-adapter"]')
      .setInputFiles({ name: 'tiny-adapter.zip', mimeType: 'application/zip', buffer: tinyAdapter(32, 'tiny-e2e') });
    const row = page.locator('[data-testid="checkpoints"] tbody tr').first();
    await row.getByRole('button', { name: 'Merged' }).waitFor({ timeout: 20_000 });
    const [download] = await Promise.all([
      page.waitForEvent('download', { timeout: 60_000 }),
      row.getByRole('button', { name: 'Merged' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/-merged\.zip$/);
    const zip = unzipSync(new Uint8Array(readFileSync((await download.path())!)));
    // The imported files had no tokenizer (Spindle's byte tokenizer read them): the merge writes it, so the folder loads on its own.
    expect(Object.keys(zip).sort()).toEqual([
      'README.md',
      'config.json',
      'generation_config.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    expect(JSON.parse(new TextDecoder().decode(zip['tokenizer.json']))).toHaveProperty('model');
    expect(JSON.parse(new TextDecoder().decode(zip['config.json']))).toMatchObject({
      model_type: 'llama',
      hidden_size: 32,
    });
    const merged = readSafetensors(zip['model.safetensors']).tensors;
    const base = readSafetensors(new Uint8Array(files[1].buffer)).tensors;
    expect([...merged.keys()].sort()).toEqual([...base.keys()].sort());
    const q = 'model.layers.0.self_attn.q_proj.weight';
    expect(merged.get(q)!.shape).toEqual([32, 32]);
    expect(merged.get(q)!.data).not.toEqual(base.get(q)!.data);
    expect(merged.get('model.layers.0.mlp.up_proj.weight')!.data).toEqual(
      base.get('model.layers.0.mlp.up_proj.weight')!.data,
    );

    // The imported model is now the playground's local policy.
    await page.locator('[data-testid="tab-playground"]').click();
    const local = page.locator('[data-testid="policy-select"] option[value="local"]');
    await expect.poll(() => local.textContent(), { timeout: 30_000 }).toContain('Local model (tiny-e2e)');
    expect(await local.isDisabled()).toBe(false);
    await page.locator('[data-testid="policy-select"]').selectOption('local');
    // The option says the short name; the model line under it says which model that is.
    expect(await page.locator('[data-testid="playground-model"]').textContent()).toContain(
      'the imported model tiny-e2e',
    );
    await page.locator('[data-testid="run-episode"]').click();
    await page.locator('[data-testid="episode-panel"][data-phase="done"]').waitFor({ timeout: 120_000 });
    expect(app.errors).toEqual([]);
  });
});

describe('importing a model by Hugging Face id', () => {
  let app: App;
  let hub: Server;
  const requests: string[] = [];
  beforeAll(async () => {
    const files = new Map((await tinyHfModel('tiny-hub')).map((f) => [f.name, f.buffer]));
    files.set(
      'README.md',
      Buffer.from('---\nlicense: mit\n---\n# Tiny hub model\n\nServed on 127.0.0.1 for this test.\n'),
    );
    // A hub on 127.0.0.1 (another origin): CORS and CORP headers, as huggingface.co sends for a cross-origin-isolated page.
    hub = createHttpServer((req, res) => {
      requests.push(req.url!);
      const m = /^\/test-org\/tiny-hub\/resolve\/main\/([\w.]+)$/.exec(req.url!);
      const headers = { 'access-control-allow-origin': '*', 'cross-origin-resource-policy': 'cross-origin' };
      const bytes = m ? files.get(m[1]) : undefined;
      if (!bytes) return void res.writeHead(404, headers).end();
      res
        .writeHead(200, { ...headers, 'content-length': bytes.length, 'content-type': 'application/octet-stream' })
        .end(bytes);
    });
    await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve));
    app = await openApp(`/?hf_endpoint=http://127.0.0.1:${(hub.address() as AddressInfo).port}#models`);
  });
  afterAll(async () => {
    await app?.close();
    hub?.close();
  });

  it('downloads owner/name into the browser cache with a progress bar; importing again after a reload downloads nothing', async () => {
    const { page } = app;
    const done = page.locator('section[aria-label="Import"] [data-testid="job"][data-status="done"]');
    await page.locator('[data-testid="import-model-id"]').fill('test-org/tiny-hub');
    await page.locator('[data-testid="import-model-submit"]').click();
    await done.first().waitFor({ timeout: 60_000 });
    expect(await done.first().textContent()).toContain('imported as test-org/tiny-hub');
    expect(requests.some((r) => r.endsWith('/model.safetensors'))).toBe(true);
    // Its card: Spindle's summary, then the repository's README.
    const card = page.locator('[data-testid="model-card"]');
    await expect.poll(() => card.textContent()).toContain('weights on this device');
    expect(await card.textContent()).toContain('Served on 127.0.0.1 for this test.');
    expect(
      await page.evaluate(async () =>
        (await (await caches.open('spindle-models')).keys()).map((r) => new URL(r.url).pathname),
      ),
    ).toEqual(expect.arrayContaining([expect.stringContaining('model.safetensors')]));

    const fetched = requests.length;
    await page.reload();
    await page.locator('[data-testid="import-model-id"]').fill('test-org/tiny-hub');
    await page.locator('[data-testid="import-model-submit"]').click();
    await done.first().waitFor({ timeout: 60_000 });
    expect(requests.length).toBe(fetched);

    // A name that is no hub id is refused at the field, before anything is fetched.
    await page.locator('[data-testid="import-model-id"]').fill('not a model');
    await page.locator('[data-testid="import-model-submit"]').click();
    await expect
      .poll(() => page.locator('section[aria-label="Import"] [data-testid="job-error"]').first().textContent())
      .toContain('Hugging Face model id');
    expect(app.errors).toEqual([]);
  });
});
