/**
 * The shipped base model loads in Spindle with the logits its builder computed: scripts/base-model/train.py
 * (PyTorch) stores the logits of a held-out transcript in models/spindle-base/reference-logits.json, and
 * Spindle's own loader and forward must reproduce them. A builder whose formulas drifted from
 * src/model/transformer.ts, or weights written in the wrong layout, fail here.
 */
import { readFileSync } from 'node:fs';
import * as tf from '@tensorflow/tfjs';
import { describe, it } from 'vitest';
import { loadHfModel } from '../../src/hub/hf.ts';
import { expectClose, useBackend } from './helpers.ts';

const DIR = 'models/spindle-base';
const reference = JSON.parse(readFileSync(`${DIR}/reference-logits.json`, 'utf8')) as {
  tokens: number[];
  positions: number[];
  logits: number[][];
};

describe('models/spindle-base', () => {
  it("reproduces the builder's logits on a held-out transcript", async () => {
    await useBackend('cpu');
    const { model } = await loadHfModel(DIR);
    const logits = tf.tidy(() => model.forward([reference.tokens]).logits.squeeze([0])).arraySync() as number[][];
    reference.positions.forEach((p, i) =>
      expectClose(logits[p], reference.logits[i], `logits at position ${p}`, 1e-3, 1e-3),
    );
    model.dispose();
  });
});
