import 'fake-indexeddb/auto';
import { strFromU8, unzipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';
import { moduleShape } from '../../src/export/peft.ts';
import { presetConfig } from '../../src/model/config.ts';
import { writeSafetensors } from '../../src/hub/safetensors.ts';
import type { HostTensors } from '../../src/model/transformer.ts';
import { checkpointAdapterZip } from '../../src/pipeline/operations/adapter-export.ts';
import { createRun, loadCheckpoint, openStore, putEvaluation, saveCheckpoint } from '../../src/store/index.ts';

const nano = presetConfig('nano', 266);

/** LoRA tensors on `layers` only, as a run with the other layers frozen trains them. */
function loraTensors(layers: number[], r: number): HostTensors {
  const out: HostTensors = new Map();
  for (const layer of layers) {
    const [o, i] = moduleShape(nano, 'q_proj');
    const key = `base_model.model.model.layers.${layer}.self_attn.q_proj`;
    out.set(`${key}.lora_A.weight`, { shape: [r, i], data: new Float32Array(r * i).fill(0.01) });
    out.set(`${key}.lora_B.weight`, { shape: [o, r], data: new Float32Array(o * r).fill(0.02) });
  }
  return out;
}

async function storeWithRun() {
  const store = await openStore({ factory: new IDBFactory() });
  // The run config says r=8 and no frozen layers; the checkpoint trained r=2 on layers 1 and 2 (what counts).
  const config = {
    ...DEFAULT_CONFIG,
    name: 'frozen',
    model: { ...DEFAULT_CONFIG.model, base_model: 'spindle-nano' },
    lora: { ...DEFAULT_CONFIG.lora, r: 8, alpha: 16 },
  };
  const run = await createRun(store, config, { id: 'run-frozen' });
  return { store, run };
}

describe('checkpointAdapterZip', () => {
  it('describes what the checkpoint trained (rank, alpha, layers_to_transform) and adds the card with evaluations', async () => {
    const { store, run } = await storeWithRun();
    const setup = {
      learningRate: 1e-3,
      frozenLayers: [0],
      lora: { r: 2, alpha: 4, dropout: 0, targetModules: ['q_proj'], layers: [1, 2] },
    };
    const id = await saveCheckpoint(store, {
      run_id: run.id,
      step: 7,
      optimizer: null,
      meta: { checkpoint: { setup } },
      adapter: writeSafetensors(loraTensors([1, 2], 2), { format: 'pt', spindle_weights: 'lora' }).slice().buffer,
    });
    await putEvaluation(store, { run_id: run.id, step: 7, benchmark: 'arith_tool', results: { success: 0.5 } });
    const { zip, config } = await checkpointAdapterZip(store, (await loadCheckpoint(store, id))!);
    expect(config).toMatchObject({
      r: 2,
      lora_alpha: 4,
      target_modules: ['q_proj'],
      layers_to_transform: [1, 2],
      base_model_name_or_path: 'spindle-nano',
    });
    const files = unzipSync(zip);
    expect(Object.keys(files).sort()).toEqual(['README.md', 'adapter_config.json', 'adapter_model.safetensors']);
    expect(JSON.parse(strFromU8(files['adapter_config.json'])).layers_to_transform).toEqual([1, 2]);
    expect(strFromU8(files['README.md'])).toMatch(/\| arith_tool \| 7 \| success=0\.5 \|/);
  });

  it('refuses a full fine-tuning checkpoint: its weights are not an adapter', async () => {
    const { store, run } = await storeWithRun();
    const full: HostTensors = new Map([['model.embed_tokens.weight', { shape: [2, 2], data: new Float32Array(4) }]]);
    const id = await saveCheckpoint(store, {
      run_id: run.id,
      step: 3,
      optimizer: null,
      meta: { checkpoint: { setup: { learningRate: 1e-3, frozenLayers: [], lora: null } } },
      adapter: writeSafetensors(full, { format: 'pt', spindle_weights: 'full' }).slice().buffer,
    });
    await expect(checkpointAdapterZip(store, (await loadCheckpoint(store, id))!)).rejects.toThrow(
      /fine-tuned every weight \(lora\.r = 0\)/,
    );
  });
});
