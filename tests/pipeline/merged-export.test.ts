/**
 * One merged export: the Models screen's "Merged weights" (through the engine) and
 * `spindle export adapter --merge` fold the same checkpoint into the same files, byte for byte,
 * tokenizer files, generation_config.json and a card included, naming the base it came from.
 */
import { unzipSync } from 'fflate';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import { moduleShape, peftConfig, type PeftConfig } from '../../src/export/peft.ts';
import { initBackend } from '../../src/kernels/backend.ts';
import { byteTokenizerConfig } from '../../src/tokenizer/byte-tokenizer-json.ts';
import { loadHfModel } from '../../src/hub/hf.ts';
import { writeSafetensors } from '../../src/hub/safetensors.ts';
import type { HostTensors } from '../../src/model/transformer.ts';
import { modelOperations, type ModelEngine } from '../../src/pipeline/app/models.ts';
import { Engine } from '../../src/pipeline/engine/browser-engine.ts';
import { mergedModel } from '../../src/pipeline/operations/merged-export.ts';
import { spawnNodeRolloutWorker } from '../../src/pipeline/platform/node.ts';
import { openFileStore } from '../../src/store/file-store.ts';
import { createRun, saveCheckpoint } from '../../src/store/index.ts';
import { cli, nanoModelDir, tempDir } from '../cli/helpers.ts';

describe('the merged export', () => {
  it('writes the same files from the Models screen and from spindle export adapter --merge', async () => {
    const model = await nanoModelDir(3);
    const { config } = await loadHfModel(model);
    const dir = tempDir();
    const store = await openFileStore(join(dir, '.spindle'));
    const run = await createRun(
      store,
      { ...DEFAULT_CONFIG, name: 'merge', model: { ...DEFAULT_CONFIG.model, base_model: model } },
      { id: 'run-merge' },
    );
    const [out, inp] = moduleShape(config, 'q_proj');
    const key = 'base_model.model.model.layers.0.self_attn.q_proj';
    const tensors: HostTensors = new Map([
      [
        `${key}.lora_A.weight`,
        { shape: [2, inp], data: Float32Array.from({ length: 2 * inp }, (_, i) => ((i % 7) - 3) / 10) },
      ],
      [
        `${key}.lora_B.weight`,
        { shape: [out, 2], data: Float32Array.from({ length: out * 2 }, (_, i) => ((i % 5) - 2) / 10) },
      ],
    ]);
    const setup = {
      learningRate: 1e-3,
      frozenLayers: [],
      lora: { r: 2, alpha: 4, dropout: 0, targetModules: ['q_proj'], layers: null },
    };
    const checkpointId = await saveCheckpoint(store, {
      run_id: run.id,
      step: 1,
      optimizer: null,
      meta: { checkpoint: { setup } },
      adapter: writeSafetensors(tensors, { format: 'pt', spindle_weights: 'lora' }).slice().buffer,
    });
    await store.close();

    const exported = await cli(
      dir,
      'export',
      'adapter',
      '--run',
      run.id,
      '--output',
      'adapter.zip',
      '--merge',
      'merged',
    );
    expect(exported.code, exported.err).toBe(0);
    const fromCli = Object.fromEntries(
      readdirSync(join(dir, 'merged')).map((name) => [name, new Uint8Array(readFileSync(join(dir, 'merged', name)))]),
    );

    const app = await openFileStore(join(dir, '.spindle'));
    try {
      const engine = new Engine({
        initBackend: () => initBackend({ forced: 'wasm' }),
        deviceLost: () => null,
        openStore: async () => app,
        loadModel: (base) => loadHfModel(base),
        baseModelMissing: () => null,
        spawnWorker: (index, generator) => spawnNodeRolloutWorker(index, generator),
        cores: 1,
      });
      // The page reaches the engine worker through Comlink, where every call is async.
      const remote: ModelEngine = {
        importModel: (s) => engine.importModel(s),
        importedModel: async () => engine.importedModel(),
        mergedModelZip: (r) => engine.mergedModelZip(r),
      };
      const file = await modelOperations(
        async () => app,
        () => remote,
      ).exportItem('merged-weights', { checkpointId }, () => {}, new AbortController().signal);
      const fromApp = unzipSync(new Uint8Array(await file.blob.arrayBuffer()));
      expect(Object.keys(fromCli).sort()).toEqual([
        'README.md',
        'config.json',
        'generation_config.json',
        'model.safetensors',
        'tokenizer.json',
        'tokenizer_config.json',
      ]);
      expect(Object.keys(fromApp).sort()).toEqual(Object.keys(fromCli).sort());
      for (const name of Object.keys(fromCli)) expect(fromApp[name], name).toEqual(fromCli[name]);
      const json = (name: string) => JSON.parse(new TextDecoder().decode(fromCli[name])) as Record<string, unknown>;
      // The base it came from; generation stops where Spindle's turns end (<|im_end|>, <|endoftext|>); the byte model's chat template.
      expect(json('config.json')._name_or_path).toBe(model);
      expect(json('generation_config.json')).toEqual({ eos_token_id: [257, 265], pad_token_id: 264 });
      expect(json('tokenizer_config.json').chat_template).toBe(byteTokenizerConfig().chat_template);
    } finally {
      await app.close();
    }
  }, 240_000);

  it("names a hub base by its hub id, in config.json and as the card's base_model", async () => {
    const model = await nanoModelDir(4);
    const base = await loadHfModel(model);
    const [out, inp] = moduleShape(base.config, 'v_proj');
    const key = 'base_model.model.model.layers.1.self_attn.v_proj';
    const adapter: HostTensors = new Map([
      [`${key}.lora_A.weight`, { shape: [2, inp], data: new Float32Array(2 * inp).fill(0.1) }],
      [`${key}.lora_B.weight`, { shape: [out, 2], data: new Float32Array(out * 2).fill(0.1) }],
    ]);
    const peft = peftConfig({
      baseModel: 'hf:test-org/nano@v2',
      r: 2,
      alpha: 4,
      dropout: 0,
      targetModules: ['v_proj'],
      layers: null,
    }) as PeftConfig;
    const files = await mergedModel({ ...base, baseModel: 'hf:test-org/nano@v2' }, adapter, peft);
    const text = (name: string) => new TextDecoder().decode(files.get(name));
    expect(JSON.parse(text('config.json'))._name_or_path).toBe('test-org/nano');
    expect(text('README.md')).toMatch(/^---\nbase_model: test-org\/nano\nlibrary_name: transformers\n/);
    expect(text('README.md')).toContain(
      '`test-org/nano` (revision v2) with a LoRA adapter (r=2, alpha=4, modules v_proj)',
    );
    base.model.dispose();
  });
});
