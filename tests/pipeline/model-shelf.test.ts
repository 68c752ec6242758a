/**
 * The engine's models across runs: each run loads its own copy, and the one before is freed (a tab used to
 * keep every run's weights and grew by a model per run), unless an episode still plays it.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type RunConfig } from '../../src/config/schema.ts';
import type { LoadedPolicyModel } from '../../src/pipeline/engine/engine-api.ts';
import { ModelShelf } from '../../src/pipeline/engine/model-shelf.ts';
import { ByteTokenizer } from '../../src/tokenizer/byte-tokenizer.ts';
import { initBackend } from '../../src/kernels/backend.ts';
import { presetConfig } from '../../src/model/config.ts';
import { saveModel } from '../../src/hub/hf.ts';
import { TransformerModel } from '../../src/model/transformer.ts';

function fakeShelf() {
  const live = new Set<number>();
  let next = 0;
  const shelf = new ModelShelf({
    loadModel: async (): Promise<LoadedPolicyModel> => {
      const id = next++;
      live.add(id);
      return {
        model: { dispose: () => live.delete(id) } as unknown as TransformerModel,
        tokenizer: new ByteTokenizer(),
      };
    },
    baseModelMissing: () => null,
  });
  return { shelf, live };
}

const config = (name: string): RunConfig => ({ ...DEFAULT_CONFIG, name });

describe('ModelShelf across runs', () => {
  it('keeps one run model: starting a run frees the previous run’s weights', async () => {
    const { shelf, live } = fakeShelf();
    for (const name of ['a', 'b', 'c']) await shelf.loadForRun(config(name));
    expect([...live]).toEqual([2]);
    expect(shelf.policyStatus()).toMatchObject({ label: 'the model of run c', name: 'run c' });
  });

  it('leaves the previous run’s model alone while an episode plays it', async () => {
    const { shelf, live } = fakeShelf();
    await shelf.loadForRun(config('a'));
    await shelf.loadForRun(config('b'), true);
    expect([...live].sort()).toEqual([0, 1]);
  });
});

describe('ModelShelf and an imported model', () => {
  it('keeps one copy of its weights: a run on it frees the import’s tensors, and a merge reads them back from its files', async () => {
    await initBackend({ forced: 'wasm' });
    const source = TransformerModel.create({ ...presetConfig('nano', 266), numLayers: 1 }, 9);
    const files = await saveModel(source, new ByteTokenizer());
    source.dispose();
    const { shelf } = fakeShelf();
    const info = await shelf.importModel(
      { files: Object.fromEntries([...files].map(([name, bytes]) => [name, new Blob([new Uint8Array(bytes)])])) },
      false,
    );
    const imported = (await shelf.policy()).model;
    const tensorsWithImport = tf.memory().numTensors;
    const run = await shelf.loadForRun({
      ...DEFAULT_CONFIG,
      name: 'on-import',
      model: { ...DEFAULT_CONFIG.model, base_model: info.base_model },
    });
    // The run's copy replaced the import's: as many tensors as before, and the import's are gone.
    expect(tf.memory().numTensors).toBe(tensorsWithImport);
    expect((await shelf.policy()).model).toBe(run.model);
    expect(() => imported.embedTokens.dataSync()).toThrow(/disposed/);
    const base = await shelf.mergeBase(info.base_model);
    expect(base.model).not.toBe(imported);
    expect(Array.from(base.model.embedTokens.dataSync())).toEqual(Array.from(run.model.embedTokens.dataSync()));
    base.release();
  });
});
