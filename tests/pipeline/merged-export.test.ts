/**
 * One merged export: the Models screen's "Merged weights" (through the engine) and
 * `spindle export adapter --merge` fold the same checkpoint into the same files, byte for byte,
 * tokenizer files included (the screen's copy used to ship none for the byte tokenizer).
 */
import { unzipSync } from 'fflate';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import { moduleShape } from '../../src/export/peft.ts';
import { initBackend } from '../../src/model/backend.ts';
import { loadHfModel } from '../../src/model/hf.ts';
import { writeSafetensors } from '../../src/model/safetensors.ts';
import type { HostTensors } from '../../src/model/transformer.ts';
import { modelOperations, type ModelEngine } from '../../src/pipeline/app/models.ts';
import { Engine } from '../../src/pipeline/browser-engine.ts';
import { spawnNodeRolloutWorker } from '../../src/pipeline/node.ts';
import { openFileStore } from '../../src/store/file-store.ts';
import { createRun, saveCheckpoint } from '../../src/store/index.ts';
import { cli, nanoModelDir, tempDir } from '../cli/helpers.ts';

describe('the merged export', () => {
  it('writes the same files from the Models screen and from spindle export adapter --merge', async () => {
    const model = await nanoModelDir(3);
    const { config } = await loadHfModel(model);
    const dir = tempDir();
    const store = await openFileStore(join(dir, '.spindle'));
    const run = await createRun(store, { ...DEFAULT_CONFIG, name: 'merge', model: { ...DEFAULT_CONFIG.model, base_model: model } }, { id: 'run-merge' });
    const [out, inp] = moduleShape(config, 'q_proj');
    const key = 'base_model.model.model.layers.0.self_attn.q_proj';
    const tensors: HostTensors = new Map([
      [`${key}.lora_A.weight`, { shape: [2, inp], data: Float32Array.from({ length: 2 * inp }, (_, i) => ((i % 7) - 3) / 10) }],
      [`${key}.lora_B.weight`, { shape: [out, 2], data: Float32Array.from({ length: out * 2 }, (_, i) => ((i % 5) - 2) / 10) }],
    ]);
    const setup = { learningRate: 1e-3, frozenLayers: [], lora: { r: 2, alpha: 4, dropout: 0, targetModules: ['q_proj'], layers: null } };
    const checkpointId = await saveCheckpoint(store, {
      run_id: run.id, step: 1, optimizer: null, meta: { checkpoint: { setup } },
      adapter: writeSafetensors(tensors, { format: 'pt', spindle_weights: 'lora' }).slice().buffer,
    });
    await store.close();

    const exported = await cli(dir, 'export', 'adapter', '--run', run.id, '--output', 'adapter.zip', '--merge', 'merged');
    expect(exported.code, exported.err).toBe(0);
    const fromCli = Object.fromEntries(readdirSync(join(dir, 'merged')).map((name) => [name, new Uint8Array(readFileSync(join(dir, 'merged', name)))]));

    const app = await openFileStore(join(dir, '.spindle'));
    try {
      const engine = new Engine({
        initBackend: () => initBackend({ forced: 'wasm' }), deviceLost: () => null, openStore: async () => app,
        loadModel: (base) => loadHfModel(base), baseModelMissing: () => null, spawnWorker: (index, generator) => spawnNodeRolloutWorker(index, generator), cores: 1,
      });
      // The page reaches the engine worker through Comlink, where every call is async.
      const remote: ModelEngine = { importModel: (s) => engine.importModel(s), importedModel: async () => engine.importedModel(), mergedModelZip: (r) => engine.mergedModelZip(r) };
      const file = await modelOperations(async () => app, () => remote).exportItem('merged-weights', { checkpointId }, () => {}, new AbortController().signal);
      const fromApp = unzipSync(new Uint8Array(await file.blob.arrayBuffer()));
      expect(Object.keys(fromCli).sort()).toEqual(['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json']);
      expect(Object.keys(fromApp).sort()).toEqual(Object.keys(fromCli).sort());
      for (const name of Object.keys(fromCli)) expect(fromApp[name], name).toEqual(fromCli[name]);
    } finally {
      await app.close();
    }
  }, 60_000);
});
