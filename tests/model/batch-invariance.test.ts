/**
 * Batching never changes an episode, on wasm: a row sampled in a batch with others (prompts of other
 * lengths, 2 to 32 rows, LoRA on) gets bit for bit the tokens and log-probs it gets alone. Two things
 * had broken it: left padding of any length shifted a row's keys against the SIMD lanes its sums over
 * keys run in (sampling.ts now pads every row to a multiple of PAD_ALIGN, alone too), and products of
 * fewer than 8 rows (the prefill's last-position logits of a small batch) went to XNNPACK, which sums in
 * another order than our kernel (wasm-matmul.ts). GenerationService.forRun batches reproducible runs on
 * wasm because of this test.
 */
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { presetConfig } from '../../src/model/config.ts';
import { attachLora } from '../../src/model/lora.ts';
import { generate } from '../../src/model/sampling.ts';
import { TransformerModel } from '../../src/model/transformer.ts';
import { createRng } from '../../src/rng.ts';
import { useBackend } from './helpers.ts';

let model: TransformerModel;
beforeAll(async () => {
  await useBackend('wasm');
  // The byte vocabulary (266) is not a multiple of 8: the head's last columns take the kernel's column tail.
  model = TransformerModel.create({ ...presetConfig('nano', 266), numLayers: 2 }, 5);
  attachLora(model, {
    r: 4,
    alpha: 8,
    dropout: 0,
    targetModules: ['q_proj', 'v_proj', 'gate_proj', 'down_proj'],
    freezeLayers: null,
    seed: 1,
  });
  const rng = createRng(3);
  for (const layer of model.layers) {
    for (const l of [layer.q_proj, layer.v_proj, layer.gate_proj, layer.down_proj])
      l.lora!.B.assign(
        tf.tensor(
          Float32Array.from({ length: l.lora!.B.size }, () => rng.normal() * 0.05),
          l.lora!.B.shape,
        ),
      );
  }
});
afterAll(() => model.dispose());

/** Prompts of lengths 9 … 70 in no order, so every row gets a different amount of left padding. */
function prompts(n: number): number[][] {
  const rng = createRng(11);
  return Array.from({ length: n }, (_, i) => Array.from({ length: 9 + ((i * 23) % 62) }, () => rng.int(0, 255)));
}

describe('batched sampling on wasm', () => {
  it('gives every row the tokens and log-probs it gets alone', async () => {
    const all = prompts(32);
    const options = { maxNewTokens: 12, temperature: 1, seed: 0 };
    const alone = [];
    for (const [i, p] of all.entries()) alone.push(await generate(model, [p], { ...options, rowSeeds: [100 + i] }));
    for (const n of [2, 5, 8, 16, 32]) {
      const batched = await generate(model, all.slice(0, n), {
        ...options,
        rowSeeds: all.slice(0, n).map((_, i) => 100 + i),
      });
      for (let i = 0; i < n; i++) {
        expect(batched.tokens[i], `row ${i} of ${n}`).toEqual(alone[i].tokens[0]);
        expect(batched.logprobs[i], `row ${i} of ${n}`).toEqual(alone[i].logprobs[0]);
      }
    }
  });
});
