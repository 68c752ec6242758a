/**
 * The engine's models across runs: each run loads its own copy, and the one before is freed (a tab used to
 * keep every run's weights and grew by a model per run), unless an episode still plays it.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type RunConfig } from '../../src/config/schema.ts';
import { ModelShelf, type LoadedPolicyModel } from '../../src/pipeline/model-shelf.ts';
import { ByteTokenizer } from '../../src/model/byte-tokenizer.ts';
import type { TransformerModel } from '../../src/model/transformer.ts';

function fakeShelf() {
  const live = new Set<number>();
  let next = 0;
  const shelf = new ModelShelf({
    loadModel: async (): Promise<LoadedPolicyModel> => {
      const id = next++;
      live.add(id);
      return { model: { dispose: () => live.delete(id) } as unknown as TransformerModel, tokenizer: new ByteTokenizer() };
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
    expect(shelf.policyStatus().label).toBe('the model of run c');
  });

  it('leaves the previous run’s model alone while an episode plays it', async () => {
    const { shelf, live } = fakeShelf();
    await shelf.loadForRun(config('a'));
    await shelf.loadForRun(config('b'), true);
    expect([...live].sort()).toEqual([0, 1]);
  });
});
