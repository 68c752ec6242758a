/** The one temperature rule: a greedy token (temperature 0) is scored at temperature 1, when sampled and when training recomputes it. */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import type { ModelConfig } from '../../src/model/config.ts';
import { tokenStats } from '../../src/model/logprobs.ts';
import { sampleToken } from '../../src/model/sampling.ts';
import { scoringTemperature } from '../../src/model/temperature.ts';
import { TransformerModel } from '../../src/model/transformer.ts';
import { createRng } from '../../src/rng.ts';
import { useBackend } from './helpers.ts';

const tiny: ModelConfig = {
  vocabSize: 30,
  hiddenSize: 16,
  intermediateSize: 24,
  numLayers: 1,
  numHeads: 2,
  numKvHeads: 1,
  headDim: 8,
  maxPositions: 32,
  ropeTheta: 10000,
  rmsNormEps: 1e-5,
  tieWordEmbeddings: false,
  attentionBias: false,
  family: 'llama',
};

describe('the scoring temperature', () => {
  it('is the sampling temperature above 0, and 1 for greedy (0, below, or none given)', () => {
    expect([0.7, 1.5, 0, -1, undefined, Number.NaN].map(scoringTemperature)).toEqual([0.7, 1.5, 1, 1, 1, 1]);
  });

  it('gives a greedy token the same log-prob when sampled and when training recomputes it', async () => {
    await useBackend('cpu');
    const model = TransformerModel.create(tiny, 3);
    const tokens = [[1, 5, 9, 2]];
    const logits = tf.tidy(
      () => model.forward(tokens).logits.slice([0, 2, 0], [1, 1, tiny.vocabSize]).dataSync() as Float32Array,
    );
    const greedy = sampleToken(logits, { temperature: 0 }, createRng(0));
    const scored = (temperature: number) =>
      tf.tidy(
        () => tokenStats(model, [[...tokens[0].slice(0, 3), greedy.token]], { temperature }).logprobs.dataSync()[2],
      );
    expect(scored(0)).toBe(scored(1));
    expect(scored(0)).toBeCloseTo(greedy.logprob, 5);
    model.dispose();
  });
});
