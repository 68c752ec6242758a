/** A one-layer HF-layout policy written to a temp folder: the model every pipeline test runs on. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ByteTokenizer } from '../../src/tokenizer/byte-tokenizer.ts';
import { presetConfig } from '../../src/model/config.ts';
import { saveModelToDir } from '../../src/hub/hf.ts';
import { TransformerModel } from '../../src/model/transformer.ts';

export const TINY_MODEL = presetConfig('nano', 266, {
  numLayers: 1,
  hiddenSize: 32,
  intermediateSize: 64,
  numHeads: 2,
  numKvHeads: 1,
  headDim: 16,
});

/** Writes a freshly initialised tiny model (weights from `seed`) and returns its folder. Call after initBackend. */
export async function writeTinyModel(seed: number, prefix: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const model = TransformerModel.create(TINY_MODEL, seed);
  await saveModelToDir(model, new ByteTokenizer(), dir);
  model.dispose();
  return dir;
}

/** Stop tokens no model samples: a generation runs its whole length, so an early end can only be an abort. */
export class EndlessTokenizer extends ByteTokenizer {
  override readonly imEndId = -1;
  override readonly eosId = -1;
}
