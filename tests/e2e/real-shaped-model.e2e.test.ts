/**
 * A real-shaped model through the whole app: a Qwen2.5-style HF folder (random weights, a
 * byte-level BPE tokenizer.json with the ChatML and <tool_call> special tokens, its own tool-calling
 * template in tokenizer_config.json) is the base of a two-update GRPO run in Chromium with two rollout
 * web workers; every stored episode decodes to the template's rendering of its stored messages (what the
 * workers sampled is what the template says, tools included); the checkpoint exports as a PEFT adapter
 * and merged into the model, whose folder keeps the model's own tokenizer and template; and the model
 * plays an episode in the Playground. The same check through the CLI's Node workers: tests/cli/hf-workers.test.ts.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Trajectory } from '../../src/contracts.ts';
import { ChatTemplate } from '../../src/format/chat-template.ts';
import { initBackend } from '../../src/kernels/backend.ts';
import type { ModelConfig } from '../../src/model/config.ts';
import { saveModel } from '../../src/hub/hf.ts';
import { readSafetensors } from '../../src/hub/safetensors.ts';
import { TransformerModel } from '../../src/model/transformer.ts';
import { familyTokenizer } from '../format/family-templates.ts';
import { openApp, type App } from './harness.ts';

const MODEL_DIR = 'dist/e2e-qwen-style';
const tokenizer = familyTokenizer('qwen2.5', { name: 'test/qwen-style' });
const shape: ModelConfig = {
  vocabSize: tokenizer.vocabSize,
  hiddenSize: 32,
  intermediateSize: 64,
  numLayers: 2,
  numHeads: 2,
  numKvHeads: 1,
  headDim: 16,
  maxPositions: 2048,
  ropeTheta: 1e6,
  rmsNormEps: 1e-6,
  tieWordEmbeddings: true,
  attentionBias: true,
  family: 'qwen2',
};

const RUN_YAML = `name: qwen-style-run
seed: 5
model:
  base_model: /e2e-qwen-style
lora:
  r: 2
  alpha: 4
  target_modules: [q_proj, v_proj]
training:
  max_steps: 2
  batch_size: 1
  group_size: 2
  eval_at_start: false
  eval_interval: 100
sampling:
  max_new_tokens: 12
safety:
  enabled: false
trajectory_collection:
  n_workers: 2
  max_steps_per_trajectory: 2
tasks:
  environments: [arith_tool]
  eval_items: 1
`;

describe('a real-shaped model (BPE tokenizer, its own tool template) through the app', () => {
  let app: App;
  beforeAll(async () => {
    await initBackend({ forced: 'wasm' });
    const model = TransformerModel.create(shape, 21);
    mkdirSync(MODEL_DIR, { recursive: true });
    for (const [name, bytes] of await saveModel(model, tokenizer)) writeFileSync(`${MODEL_DIR}/${name}`, bytes);
    model.dispose();
    app = await openApp('/?backend=wasm#train');
  });
  afterAll(async () => {
    await app?.close();
    rmSync(MODEL_DIR, { recursive: true, force: true });
  });

  it('trains two updates in web workers, stores the template’s own rendering, exports PEFT and merged, and plays', async () => {
    const { page } = app;
    await page.locator('[data-testid="yaml-view"]').click();
    await page.locator('[data-testid="yaml-editor"]').fill(RUN_YAML);
    await expect.poll(() => page.locator('[data-testid="config-validity"]').textContent()).toBe('valid');
    await page.locator('[data-testid="start-run"]').click();
    await expect
      .poll(() => page.locator('[data-testid="run-status"]').textContent(), { timeout: 180_000 })
      .toBe('finished');

    // Every stored episode, read back from the page's IndexedDB: its tokens are the template's text for its messages.
    await page.locator('[data-testid="tab-models"]').click();
    const [jsonl] = await Promise.all([
      page.waitForEvent('download', { timeout: 60_000 }),
      page.locator('[data-testid="export-dataset-jsonl"]').click(),
    ]);
    const ids = readFileSync((await jsonl.path())!, 'utf8')
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { id: string }).id);
    expect(ids.length).toBeGreaterThanOrEqual(4);
    const template = ChatTemplate.fromTokenizerConfig(tokenizer.configJson, {
      tools: true,
      hasToken: (t) => tokenizer.tokenToId(t) !== undefined,
    })!;
    for (const id of ids) {
      const t = (await page.evaluate(
        (tid) =>
          (
            globalThis as unknown as { __spindleStore: { getTrajectory(id: string): Promise<unknown> } }
          ).__spindleStore.getTrajectory(tid),
        id,
      )) as Trajectory;
      expect(t.tokens.length).toBeGreaterThan(0);
      expect(tokenizer.decode(t.tokens)).toBe(template.render(t.messages, { tools: t.tools }));
      expect(tokenizer.decode(t.tokens)).toContain('"name": "calc"');
    }

    // The last checkpoint as a PEFT adapter, and merged into the model with its own tokenizer and template.
    const row = page.locator('[data-testid="checkpoints"] tbody tr').first();
    const [adapter] = await Promise.all([
      page.waitForEvent('download', { timeout: 60_000 }),
      row.locator('[data-testid="export-adapter"]').click(),
    ]);
    const peft = unzipSync(new Uint8Array(readFileSync((await adapter.path())!)));
    const adapterConfig = JSON.parse(new TextDecoder().decode(peft['adapter_config.json'])) as {
      peft_type: string;
      r: number;
      target_modules: string[];
    };
    expect(adapterConfig).toMatchObject({ peft_type: 'LORA', r: 2 });
    expect([...adapterConfig.target_modules].sort()).toEqual(['q_proj', 'v_proj']);
    expect(
      [...readSafetensors(peft['adapter_model.safetensors']).tensors.keys()].some((k) =>
        k.endsWith('q_proj.lora_B.weight'),
      ),
    ).toBe(true);

    const [merged] = await Promise.all([
      page.waitForEvent('download', { timeout: 120_000 }),
      row.getByRole('button', { name: 'Merged' }).click(),
    ]);
    const folder = unzipSync(new Uint8Array(readFileSync((await merged.path())!)));
    expect(JSON.parse(new TextDecoder().decode(folder['tokenizer.json']))).toEqual(tokenizer.json);
    expect(JSON.parse(new TextDecoder().decode(folder['tokenizer_config.json']))).toMatchObject({
      chat_template: tokenizer.configJson.chat_template,
    });
    const base = readSafetensors(new Uint8Array(readFileSync(`${MODEL_DIR}/model.safetensors`))).tensors;
    const weights = readSafetensors(folder['model.safetensors']).tensors;
    expect([...weights.keys()].sort()).toEqual([...base.keys()].sort());
    // Merged = base + (alpha / r) · B·A of the exported adapter (a random model's groups may all score alike, so B may be 0).
    const lora = readSafetensors(peft['adapter_model.safetensors']).tensors;
    const A = [...lora].find(([k]) => k.endsWith('layers.0.self_attn.q_proj.lora_A.weight'))![1];
    const B = [...lora].find(([k]) => k.endsWith('layers.0.self_attn.q_proj.lora_B.weight'))![1];
    const [out, r] = B.shape;
    const inner = A.shape[1];
    const q = base.get('model.layers.0.self_attn.q_proj.weight')!.data;
    const expected = Float32Array.from(q, (w, i) => {
      const [row, col] = [Math.floor(i / inner), i % inner];
      let delta = 0;
      for (let k = 0; k < r; k++) delta += B.data[row * r + k] * A.data[k * inner + col];
      return w + (4 / 2) * delta;
    });
    expect(out * inner).toBe(q.length);
    const mergedQ = weights.get('model.layers.0.self_attn.q_proj.weight')!.data;
    expect(Math.max(...Array.from(mergedQ, (w, i) => Math.abs(w - expected[i])))).toBeLessThan(1e-5);
    expect(weights.get('model.layers.0.mlp.up_proj.weight')!.data).toEqual(
      base.get('model.layers.0.mlp.up_proj.weight')!.data,
    );

    // The engine's model plays an episode in the Playground, in its own format.
    await page.locator('[data-testid="tab-playground"]').click();
    await page
      .locator('[data-testid="policy-select"] option[value="local"]:not([disabled])')
      .waitFor({ state: 'attached', timeout: 30_000 });
    await page.locator('[data-testid="policy-select"]').selectOption('local');
    await page.locator('[data-testid="run-episode"]').click();
    await page.locator('[data-testid="episode-panel"][data-phase="done"]').waitFor({ timeout: 120_000 });
    expect(app.errors).toEqual([]);
  });
});
