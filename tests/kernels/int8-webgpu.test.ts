/**
 * The int8 base on WebGPU (src/kernels/webgpu/int8-widen.ts), Dawn on SwiftShader in Node: the widening
 * gives the host's dequantized values exactly (plain and transposed, a row whose last word is part
 * padding), and the logits and LoRA gradients of an int8 model, recomputing its blocks, match the cpu
 * backend's within the WebGPU kernels' float tolerance (2e-4 of the largest value: sums run in another order).
 */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { useNodeWebGpu } from '../../bench/lib/node-webgpu.ts';
import { INT8_WIDEN_KERNEL } from '../../src/kernels/fused.ts';
import { dequantizeInt8Host, int8Weight, quantizeInt8Host } from '../../src/model/int8.ts';
import { attachLora } from '../../src/model/lora.ts';
import { tokenStats } from '../../src/model/logprobs.ts';
import type { ModelConfig } from '../../src/model/config.ts';
import { TransformerModel } from '../../src/model/transformer.ts';
import { createRng, normalArray } from '../../src/rng.ts';
import { expectClose } from '../model/helpers.ts';

const tiny: ModelConfig = {
  vocabSize: 40,
  hiddenSize: 32,
  intermediateSize: 48,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  headDim: 8,
  maxPositions: 32,
  ropeTheta: 10000,
  rmsNormEps: 1e-5,
  tieWordEmbeddings: true,
  attentionBias: false,
  family: 'llama',
};
const tokens = [
  [1, 5, 9, 2, 7, 3, 8, 4],
  [6, 6, 1, 0, 2, 9, 11, 12],
];

beforeAll(async () => {
  await useNodeWebGpu({ software: true });
});

/** Logits and LoRA gradients of the int8 tiny model on `backend`, recomputing its blocks. */
async function run(backend: string): Promise<Float32Array[]> {
  await tf.setBackend(backend);
  const model = TransformerModel.create(tiny, 2, 'int8');
  attachLora(model, { r: 2, alpha: 4, dropout: 0, targetModules: ['q_proj', 'v_proj', 'down_proj'] });
  const rng = createRng(4);
  for (const v of model.trainableVariables()) v.assign(tf.tensor(normalArray(rng, v.size, 0.1), v.shape));
  model.recompute = 'on';
  const logits = tf.tidy(() => model.forward(tokens).logits);
  const vars = model.trainableVariables();
  const { value, grads } = tf.variableGrads(() => tf.sum(tokenStats(model, tokens).logprobs) as tf.Scalar, vars);
  const out = [
    new Float32Array(await logits.data()),
    ...(await Promise.all(vars.map(async (v) => new Float32Array(await grads[v.name].data())))),
  ];
  tf.dispose([logits, value, ...Object.values(grads)]);
  model.dispose();
  return out;
}

describe('int8 base on WebGPU (SwiftShader in Node)', () => {
  it('widens to the host-dequantized values, plain and transposed', async () => {
    await tf.setBackend('webgpu');
    const [inDim, outDim] = [5, 10];
    const values = normalArray(createRng(1), inDim * outDim, 1);
    const { words, scales } = quantizeInt8Host(values, inDim, outDim);
    const w = int8Weight(values, inDim, outDim);
    for (const transpose of [false, true]) {
      const t = tf
        .engine()
        .runKernel(INT8_WIDEN_KERNEL, { q: w.packed, scales: w.scales }, { outDim, transpose }) as tf.Tensor;
      expect(t.shape).toEqual(transpose ? [outDim, inDim] : [inDim, outDim]);
      expect(Array.from(await t.data())).toEqual(
        Array.from(dequantizeInt8Host(words, scales, inDim, outDim, transpose)),
      );
      t.dispose();
    }
    tf.dispose([w.packed, w.scales]);
  });

  it('logits and recomputed LoRA gradients of an int8 model match cpu', async () => {
    const cpu = await run('cpu');
    const gpu = await run('webgpu');
    expect(gpu).toHaveLength(cpu.length);
    gpu.forEach((g, k) => expectClose(g, cpu[k], k === 0 ? 'logits' : `gradient ${k}`, 0, 2e-4));
  });
});
