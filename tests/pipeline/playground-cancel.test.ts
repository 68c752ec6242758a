/** Cancelling a Playground episode gives its generation up too: the engine stops instead of finishing a turn nobody reads. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Trajectory } from '../../src/contracts.ts';
import { initBackend } from '../../src/kernels/backend.ts';
import { TransformerModel } from '../../src/model/transformer.ts';
import type { RemoteGenerator } from '../../src/pipeline/engine/generation.ts';
import { PlaygroundEpisodes } from '../../src/pipeline/engine/play-episode.ts';
import { getEnvironment } from '../../src/envs/registry.ts';
import { EndlessTokenizer, TINY_MODEL } from './tiny-model.ts';

describe('Playground cancel', () => {
  let model: TransformerModel;
  beforeAll(async () => {
    await initBackend({ forced: 'cpu' });
    model = TransformerModel.create(TINY_MODEL, 3);
  });
  afterAll(() => model.dispose());

  it('rejects the episode and stops its generation within a few tokens', async () => {
    let turn: Promise<unknown> | null = null;
    let started!: () => void;
    const asked = new Promise<void>((r) => (started = r));
    // A worker that asks the engine for one very long turn and waits for it.
    const episodes = new PlaygroundEpisodes((generator: RemoteGenerator) => ({
      configure: async () => {},
      run: () => {
        turn = generator.generate({
          tokens: [1, 2, 3],
          sampling: { temperature: 1, top_k: 0, top_p: 1, max_new_tokens: 900 },
          seed: 1,
        });
        started();
        return new Promise<Trajectory>(() => {});
      },
      terminate: () => {},
      onCrash: () => {},
    }));
    const task = getEnvironment('arith_tool').generate(1, 1, 'train');
    const playing = episodes.play(
      { episodeId: 'p1', policy: 'local', task, seed: 1 },
      { model, tokenizer: new EndlessTokenizer() } as never,
      () => undefined,
    );
    await asked;
    episodes.cancel('p1');
    await expect(playing).rejects.toMatchObject({ name: 'AbortError' });
    // The turn itself is given up (before, it ran its 900 tokens and resolved for nobody).
    await expect(turn).rejects.toMatchObject({ name: 'AbortError' });
  }, 30_000);
});
