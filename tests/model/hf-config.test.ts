/**
 * Reading HF config.json as transformers 4 and 5 write it: RoPE theta and scaling in either place,
 * every declared bias, Qwen3's q/k norms, and refusals that name the field. The parity fixture's
 * llama_bias and qwen3 cases (tests/model/parity.test.ts) pin the numbers; here we check that those
 * cases really depend on what is read (ignoring a field moves the logits far past the tolerance).
 */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  countParameters,
  fromHfConfig,
  toHfConfig,
  type HfConfigJson,
  type ModelConfig,
} from '../../src/model/config.ts';
import { expectedTensors } from '../../src/hub/hf-layout.ts';
import { ropeInverseFrequencies } from '../../src/model/rope.ts';
import { TransformerModel } from '../../src/model/transformer.ts';
import { hostTensors, loadFixture, useBackend, type FixtureTensor } from './helpers.ts';

interface Case {
  config: HfConfigJson;
  tokens: number[][];
  weights: Record<string, FixtureTensor>;
  logits: FixtureTensor;
}
const fixture = loadFixture<Record<'llama' | 'qwen2' | 'llama_bias' | 'qwen3', Case>>('model-parity.json');

const smol: HfConfigJson = {
  model_type: 'llama',
  vocab_size: 49152,
  hidden_size: 576,
  intermediate_size: 1536,
  num_hidden_layers: 30,
  num_attention_heads: 9,
  num_key_value_heads: 3,
  max_position_embeddings: 8192,
  rms_norm_eps: 1e-5,
  tie_word_embeddings: true,
  hidden_act: 'silu',
  attention_bias: false,
  mlp_bias: false,
};

beforeAll(() => useBackend('cpu'));

function maxDiff(config: ModelConfig, c: Case): number {
  const model = TransformerModel.fromWeights(config, hostTensors(c.weights));
  const out = tf.tidy(() => model.forward(c.tokens).logits.dataSync());
  model.dispose();
  return Math.max(...out.map((v, i) => Math.abs(v - c.logits.data[i])));
}

describe('HF config: RoPE', () => {
  it('reads theta from transformers-5 rope_parameters as from transformers-4 rope_theta', () => {
    expect(fromHfConfig({ ...smol, rope_parameters: { rope_type: 'default', rope_theta: 100000 } }).ropeTheta).toBe(
      100000,
    );
    expect(fromHfConfig({ ...smol, rope_theta: 100000 }).ropeTheta).toBe(100000);
    expect(fromHfConfig(smol).ropeTheta).toBe(10000);
  });

  it('reads llama3 scaling from rope_scaling (type or rope_type) and rope_parameters alike', () => {
    const fields = { factor: 32, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 8192 };
    const expected = { type: 'llama3', factor: 32, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: 8192 };
    expect(fromHfConfig({ ...smol, rope_theta: 5e5, rope_scaling: { rope_type: 'llama3', ...fields } })).toMatchObject({
      ropeTheta: 5e5,
      ropeScaling: expected,
    });
    expect(fromHfConfig({ ...smol, rope_theta: 5e5, rope_scaling: { type: 'llama3', ...fields } })).toMatchObject({
      ropeScaling: expected,
    });
    expect(
      fromHfConfig({ ...smol, rope_parameters: { rope_type: 'llama3', rope_theta: 5e5, ...fields } }),
    ).toMatchObject({ ropeTheta: 5e5, ropeScaling: expected });
  });

  it('refuses rope types and fields it does not implement, by name', () => {
    expect(() => fromHfConfig({ ...smol, rope_scaling: { rope_type: 'yarn', factor: 4 } })).toThrow(
      /rope_scaling rope_type "yarn" is not supported; expected one of default, linear, llama3/,
    );
    expect(() =>
      fromHfConfig({ ...smol, rope_parameters: { rope_type: 'dynamic', rope_theta: 1e4, factor: 2 } }),
    ).toThrow(/rope_parameters rope_type "dynamic"/);
    expect(() =>
      fromHfConfig({ ...smol, rope_parameters: { rope_type: 'default', rope_theta: 1e4, partial_rotary_factor: 0.5 } }),
    ).toThrow(/partial_rotary_factor are not supported/);
    expect(() =>
      fromHfConfig({
        ...smol,
        rope_parameters: { full_attention: { rope_theta: 1e4 }, sliding_attention: { rope_theta: 1e4 } },
      }),
    ).toThrow(/per-layer-type rope_parameters/);
  });

  it('llama3 inverse frequencies: short wavelengths kept, long ones divided, the band between blended', () => {
    const inv = ropeInverseFrequencies(8, 10000, {
      type: 'llama3',
      factor: 8,
      lowFreqFactor: 1,
      highFreqFactor: 4,
      originalMaxPositions: 128,
    });
    const smooth = (128 / ((2 * Math.PI) / 0.1) - 1) / 3;
    expect([...inv]).toEqual(
      [1, ((1 - smooth) * 0.1) / 8 + smooth * 0.1, 0.01 / 8, 0.001 / 8].map((v, i) => (i === 0 ? 1 : v)),
    );
    expect(inv[1]).toBeCloseTo(0.1 * (1 - ((1 - smooth) * 7) / 8), 12);
  });

  it('the llama_bias fixture depends on the llama3 scaling (plain RoPE is far off)', async () => {
    const c = fixture.llama_bias;
    const config = fromHfConfig(c.config);
    expect(config.ropeScaling?.type).toBe('llama3');
    expect(maxDiff(config, c)).toBeLessThan(1e-3);
    expect(maxDiff({ ...config, ropeScaling: undefined }, c)).toBeGreaterThan(1e-2);
  });
});

describe('HF config: biases and norms', () => {
  it('Llama attention_bias biases q/k/v and o_proj; mlp_bias the MLP; Qwen2 only q/k/v', () => {
    expect(fromHfConfig({ ...smol, attention_bias: true })).toMatchObject({ attentionBias: true, outputBias: true });
    expect(fromHfConfig({ ...smol, mlp_bias: true })).toMatchObject({ mlpBias: true, attentionBias: false });
    const qwen2 = fromHfConfig(fixture.qwen2.config);
    expect(qwen2).toMatchObject({ attentionBias: true });
    expect(qwen2.outputBias).toBeUndefined();
    const names = [...expectedTensors(fromHfConfig(fixture.llama_bias.config)).keys()];
    expect(names).toContain('model.layers.1.self_attn.o_proj.bias');
    expect(names).toContain('model.layers.0.mlp.down_proj.bias');
  });

  it('the llama_bias fixture depends on the o_proj and MLP biases', () => {
    const c = fixture.llama_bias;
    const weights = hostTensors(c.weights);
    for (const [name, t] of weights) if (/(o_proj|mlp\.\w+)\.bias$/.test(name)) t.data.fill(0);
    const model = TransformerModel.fromWeights(fromHfConfig(c.config), weights);
    const out = tf.tidy(() => model.forward(c.tokens).logits.dataSync());
    model.dispose();
    expect(Math.max(...out.map((v, i) => Math.abs(v - c.logits.data[i])))).toBeGreaterThan(1e-2);
  });

  it('Qwen3 has per-head q/k norms over head_dim and no top-level rope_theta', () => {
    const config = fromHfConfig(fixture.qwen3.config);
    expect(config).toMatchObject({ family: 'qwen3', qkNorm: true, headDim: 8, ropeTheta: 1e6, attentionBias: false });
    expect(expectedTensors(config).get('model.layers.0.self_attn.q_norm.weight')).toEqual([8]);
    const model = TransformerModel.create(config, 1);
    expect(model.parameterCount()).toBe(countParameters(config));
    model.dispose();
  });

  it('refuses other architectures and attention layouts by name', () => {
    expect(() => fromHfConfig({ ...smol, model_type: 'mistral' })).toThrow(
      /model_type "mistral" .* is not supported; expected one of llama, qwen2, qwen3/,
    );
    expect(() =>
      fromHfConfig({ ...fixture.qwen3.config, layer_types: ['full_attention', 'sliding_attention'] }),
    ).toThrow(/layer_types .*sliding_attention.* expected only "full_attention"/);
    expect(() => fromHfConfig({ ...fixture.qwen2.config, mlp_bias: true })).toThrow(
      /mlp_bias=true is not supported for qwen2/,
    );
  });

  it('every fixture config survives toHfConfig → fromHfConfig unchanged', () => {
    for (const c of Object.values(fixture)) {
      if (typeof c !== 'object' || !('config' in c)) continue;
      const config = fromHfConfig(c.config);
      expect(fromHfConfig(toHfConfig(config))).toEqual(config);
      expect(countParameters(config)).toBe(Object.values(c.weights).reduce((n, t) => n + t.data.length, 0));
    }
  });
});
