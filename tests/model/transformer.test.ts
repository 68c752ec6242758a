/** Model behaviour beyond the PyTorch parity: presets, LoRA algebra, freezing, tensor hygiene, sampling. */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { countParameters, fromHfConfig, presetConfig, type ModelConfig } from '../../src/model/config.ts';
import { peftAdapterConfig } from '../../src/export/peft.ts';
import { attachLora, exportLora, freezeLayers, importLora, parseLayerRange } from '../../src/model/lora.ts';
import { crossEntropyLoss, tokenStats } from '../../src/model/logprobs.ts';
import { createRng, deriveSeed } from '../../src/rng.ts';
import { generate, sampleToken } from '../../src/model/sampling.ts';
import { TransformerModel } from '../../src/model/transformer.ts';
import { expectClose, sequenceLogprobs, useBackend } from './helpers.ts';

const tiny: ModelConfig = {
  vocabSize: 50,
  hiddenSize: 32,
  intermediateSize: 48,
  numLayers: 3,
  numHeads: 4,
  numKvHeads: 2,
  headDim: 8,
  maxPositions: 128,
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

function logitsOf(model: TransformerModel, useLora?: boolean): Float32Array {
  return tf.tidy(() => model.forward(tokens, { useLora }).logits.dataSync() as Float32Array);
}

/** Gives every adapter B random values, as training would (a fresh B is zero and changes nothing). */
function perturbAdapters(model: TransformerModel, seed: number): void {
  const rng = createRng(seed);
  for (const layer of model.layers) {
    for (const linear of Object.values(layer)) {
      if (typeof linear === 'object' && linear !== null && 'lora' in linear && linear.lora) {
        const B = linear.lora.B;
        B.assign(
          tf.tensor(
            Float32Array.from({ length: B.size }, () => rng.normal() * 0.2),
            B.shape,
          ),
        );
      }
    }
  }
}

beforeAll(async () => {
  await useBackend('wasm');
});

describe('presets', () => {
  it('are about 1M, 5M and 20M parameters with the byte vocabulary', () => {
    const counts = (['nano', 'micro', 'mini'] as const).map((p) => countParameters(presetConfig(p, 266)));
    expect(counts[0]).toBeGreaterThan(0.8e6);
    expect(counts[0]).toBeLessThan(1.3e6);
    expect(counts[1]).toBeGreaterThan(4e6);
    expect(counts[1]).toBeLessThan(6e6);
    expect(counts[2]).toBeGreaterThan(16e6);
    expect(counts[2]).toBeLessThan(24e6);
  });

  it('countParameters matches the variables the model holds', () => {
    const model = TransformerModel.create(presetConfig('nano', 266), 1);
    expect(model.parameterCount()).toBe(countParameters(model.config));
    model.dispose();
  });

  it('reads a Qwen2.5-style config.json and names unsupported fields', () => {
    const qwen = {
      model_type: 'qwen2',
      vocab_size: 151936,
      hidden_size: 896,
      intermediate_size: 4864,
      num_hidden_layers: 24,
      num_attention_heads: 14,
      num_key_value_heads: 2,
      max_position_embeddings: 32768,
      rope_theta: 1e6,
      rms_norm_eps: 1e-6,
      tie_word_embeddings: true,
      hidden_act: 'silu',
      use_sliding_window: false,
      rope_scaling: null,
    };
    expect(fromHfConfig(qwen)).toMatchObject({
      headDim: 64,
      numKvHeads: 2,
      attentionBias: true,
      tieWordEmbeddings: true,
      family: 'qwen2',
    });
    expect(() => fromHfConfig({ ...qwen, model_type: 'llama', rope_scaling: { rope_type: 'llama3' } })).toThrow(
      /rope_scaling "low_freq_factor" must be a positive number for rope_type "llama3"/,
    );
    expect(() => fromHfConfig({ ...qwen, hidden_size: undefined })).toThrow(/field "hidden_size" is missing/);
  });

  it('rejects an invalid head layout with the fields named', () => {
    expect(() => presetConfig('nano', 266, { numKvHeads: 3 })).toThrow(
      /numHeads \(4\) must be a multiple of numKvHeads \(3\)/,
    );
  });
});

describe('LoRA', () => {
  it('fresh adapters change nothing; trained adapters do; disabled adapters give the base model', () => {
    const model = TransformerModel.create(tiny, 3);
    const base = logitsOf(model);
    attachLora(model, {
      r: 4,
      alpha: 8,
      dropout: 0,
      targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
    });
    expectClose(logitsOf(model), base, 'fresh adapter', 1e-6, 0);
    perturbAdapters(model, 9);
    const adapted = logitsOf(model);
    expect(Math.max(...adapted.map((v, i) => Math.abs(v - base[i])))).toBeGreaterThan(1e-2);
    expectClose(logitsOf(model, false), base, 'LoRA disabled = base', 1e-6, 0);
    model.loraEnabled = false;
    expectClose(logitsOf(model), base, 'loraEnabled=false = base', 1e-6, 0);
    model.loraEnabled = true;
    // Folded into the base weights it is the same model: tests/export/peft.test.ts (the merged export's fold).
    model.dispose();
  });

  it('exports PEFT keys and shapes and imports them back', async () => {
    const model = TransformerModel.create(tiny, 4);
    attachLora(model, { r: 2, alpha: 4, dropout: 0, targetModules: ['q_proj', 'down_proj'], freezeLayers: '0' });
    perturbAdapters(model, 5);
    const adapted = logitsOf(model);
    const exported = await exportLora(model);
    expect([...exported.keys()].sort()).toEqual([
      'base_model.model.model.layers.1.mlp.down_proj.lora_A.weight',
      'base_model.model.model.layers.1.mlp.down_proj.lora_B.weight',
      'base_model.model.model.layers.1.self_attn.q_proj.lora_A.weight',
      'base_model.model.model.layers.1.self_attn.q_proj.lora_B.weight',
      'base_model.model.model.layers.2.mlp.down_proj.lora_A.weight',
      'base_model.model.model.layers.2.mlp.down_proj.lora_B.weight',
      'base_model.model.model.layers.2.self_attn.q_proj.lora_A.weight',
      'base_model.model.model.layers.2.self_attn.q_proj.lora_B.weight',
    ]);
    expect(exported.get('base_model.model.model.layers.1.mlp.down_proj.lora_A.weight')!.shape).toEqual([2, 48]); // [r, in]
    expect(exported.get('base_model.model.model.layers.1.self_attn.q_proj.lora_B.weight')!.shape).toEqual([32, 2]); // [out, r]
    expect(peftAdapterConfig(model, 'spindle-nano')).toMatchObject({
      peft_type: 'LORA',
      r: 2,
      lora_alpha: 4,
      layers_to_transform: [1, 2],
    });

    const fresh = TransformerModel.fromWeights(tiny, await model.getWeights());
    attachLora(fresh, { r: 2, alpha: 4, dropout: 0, targetModules: ['q_proj', 'down_proj'], freezeLayers: '0' });
    importLora(fresh, exported);
    expectClose(logitsOf(fresh), adapted, 'imported adapter', 1e-6, 0);

    const wrong = new Map(exported);
    wrong.set('base_model.model.model.layers.1.mlp.down_proj.lora_A.weight', {
      shape: [2, 32],
      data: new Float32Array(64),
    });
    expect(() => importLora(fresh, wrong)).toThrow(
      /"base_model\.model\.model\.layers\.1\.mlp\.down_proj\.lora_A\.weight" has shape \[2, 32\], expected \[2, 48\]/,
    );
    model.dispose();
    fresh.dispose();
  });

  it('trains only the adapters of non-frozen layers; full fine-tuning respects frozen layers', () => {
    const model = TransformerModel.create(tiny, 5);
    expect(model.trainableVariables()).toHaveLength(model.namedParameters().length);
    freezeLayers(model, '0-1');
    const perLayer = 9; // 2 norms + 7 linears
    expect(model.trainableVariables()).toHaveLength(model.namedParameters().length - 2 * perLayer);
    attachLora(model, { r: 2, alpha: 4, dropout: 0.1, targetModules: ['q_proj', 'v_proj'], freezeLayers: '0-1' });
    expect(model.trainableVariables()).toHaveLength(2 * 2); // layer 2 only: q and v, A and B each
    model.dispose();
  });

  it('parses layer ranges and explains bad ones', () => {
    expect([...parseLayerRange('0-2,5', 8)]).toEqual([0, 1, 2, 5]);
    expect(parseLayerRange(null, 8).size).toBe(0);
    expect(() => parseLayerRange('0-8', 6)).toThrow(/outside the model's layers 0-5/);
    expect(() => parseLayerRange('first', 6)).toThrow(/write it like "0-8"/);
  });
});

describe('training step and tensor hygiene', () => {
  it('an Adam step lowers the loss and leaves no tensors behind; neither does generation', async () => {
    const model = TransformerModel.create(tiny, 6);
    attachLora(model, { r: 4, alpha: 8, dropout: 0.1, targetModules: ['q_proj', 'v_proj', 'down_proj'] });
    const optimizer = tf.train.adam(1e-2);
    const step = (seed: number) => {
      const loss = optimizer.minimize(
        () => crossEntropyLoss(model, tokens, undefined, { dropoutSeed: seed }),
        true,
        model.trainableVariables(),
      )!;
      const value = loss.dataSync()[0];
      loss.dispose();
      return value;
    };
    const first = step(1); // creates the optimizer's moment tensors
    const before = tf.memory().numTensors;
    for (let s = 2; s < 8; s++) step(s);
    expect(tf.memory().numTensors).toBe(before);
    expect(step(9)).toBeLessThan(first);

    await generate(model, [[1, 2, 3], [4]], { maxNewTokens: 5, temperature: 1, seed: 1 });
    // Generation keeps one tensor, the transposed tied head, and nothing else; a full forward (training,
    // log-probs) drops it again.
    expect(tf.memory().numTensors).toBe(before + (model.config.tieWordEmbeddings ? 1 : 0));
    await generate(model, [[1, 2, 3]], { maxNewTokens: 5, temperature: 1, seed: 1, useCache: false });
    await sequenceLogprobs(model, [
      [1, 2, 3],
      [4, 5],
    ]);
    expect(tf.memory().numTensors).toBe(before);
    optimizer.dispose();
    model.dispose();
  });

  it("generation's kept tied head follows the embedding when its weights change", () => {
    const model = TransformerModel.create(tiny, 8);
    expect(model.config.tieWordEmbeddings).toBe(true);
    const last = () => tf.tidy(() => Array.from(model.forward([[1, 2, 3]], { lastOnly: true }).logits.dataSync()));
    const full = () =>
      tf.tidy(() =>
        Array.from(
          model
            .forward([[1, 2, 3]])
            .logits.slice([0, 2, 0], [1, 1, -1])
            .dataSync(),
        ),
      );
    last().forEach((x, i) => expect(x).toBeCloseTo(full()[i], 5));
    model.embedTokens.assign(tf.randomNormal(model.embedTokens.shape, 0, 0.5, 'float32', 3));
    const [after, reference] = [last(), full()];
    after.forEach((x, i) => expect(x).toBeCloseTo(reference[i], 5));
    model.dispose();
  });

  it('variableGrads over tokenStats gives gradients for exactly the trainable variables', () => {
    const model = TransformerModel.create(tiny, 7);
    attachLora(model, { r: 2, alpha: 2, dropout: 0, targetModules: ['q_proj'] });
    const vars = model.trainableVariables();
    const { value, grads } = tf.variableGrads(() => {
      const { logprobs, entropy } = tokenStats(model, tokens);
      return tf.add(tf.neg(tf.mean(logprobs)), tf.mul(0.01, tf.mean(entropy))) as tf.Scalar;
    }, vars);
    expect(Object.keys(grads)).toHaveLength(vars.length);
    expect(Number.isFinite(value.dataSync()[0])).toBe(true);
    value.dispose();
    tf.dispose(grads);
    model.dispose();
  });
});

describe('sampling', () => {
  const model = () => TransformerModel.create({ ...tiny, numLayers: 2 }, 11);
  const prompts = [
    [1, 2, 3, 4, 5],
    [7, 8],
    [9, 10, 11],
  ];

  it('is reproducible with a seed and differs with another seed', async () => {
    const m = model();
    const opts = { maxNewTokens: 12, temperature: 1.5, seed: 42 };
    const a = await generate(m, prompts, opts);
    const b = await generate(m, prompts, opts);
    const c = await generate(m, prompts, { ...opts, seed: 43 });
    expect(b.tokens).toEqual(a.tokens);
    expect(b.logprobs).toEqual(a.logprobs);
    expect(c.tokens).not.toEqual(a.tokens);
    m.dispose();
  });

  it('gives the same tokens with and without the KV cache, batched or alone', async () => {
    const m = model();
    const opts = { maxNewTokens: 16, temperature: 1, topK: 20, topP: 0.95, seed: 7 };
    const cached = await generate(m, prompts, opts);
    const recomputed = await generate(m, prompts, { ...opts, useCache: false });
    expect(recomputed.tokens).toEqual(cached.tokens);
    for (let b = 0; b < prompts.length; b++)
      expectClose(recomputed.logprobs[b], cached.logprobs[b], `row ${b} logprobs`, 1e-4, 0);
    // Row b draws from its own stream deriveSeed(seed, b): row 0 alone samples what it sampled in the batch.
    const alone = await generate(m, [prompts[0]], opts);
    expect(alone.tokens[0]).toEqual(cached.tokens[0]);
    m.dispose();
  });

  it('drops rows from the batch as they stop, and the rows left sample what they would alone', async () => {
    const m = model();
    const rowPrompts = Array.from({ length: 8 }, (_, b) => [b + 1, 2 * b + 3, 5]);
    const opts = { maxNewTokens: 24, temperature: 1, seed: 11 };
    const free = await generate(m, rowPrompts, opts);
    // Stop on tokens rows sample early, so rows leave the batch at different steps.
    const stopTokens = [...new Set(free.tokens.map((t, b) => t[(b % 5) + 1]))].slice(0, 3);
    const batched = await generate(m, rowPrompts, { ...opts, stopTokens });
    expect(new Set(batched.tokens.map((t) => t.length)).size).toBeGreaterThan(2);
    for (let b = 0; b < rowPrompts.length; b++) {
      const alone = await generate(m, [rowPrompts[b]], { ...opts, stopTokens, rowSeeds: [deriveSeed(opts.seed, b)] });
      expect(alone.tokens[0], `row ${b}`).toEqual(batched.tokens[b]);
      expectClose(alone.logprobs[0], batched.logprobs[b], `row ${b} logprobs`, 1e-4, 0);
      expect(alone.finishReasons[0]).toBe(batched.finishReasons[b]);
    }
    m.dispose();
  });

  it('prefills a repeated prompt once; every copy still samples its own continuation, as it would alone', async () => {
    const m = model();
    const rowPrompts = [
      [4, 5, 6],
      [4, 5, 6],
      [9, 1],
      [4, 5, 6],
    ];
    const opts = { maxNewTokens: 12, temperature: 1, seed: 5 };
    const batched = await generate(m, rowPrompts, opts);
    expect(new Set(batched.tokens.filter((_, b) => b !== 2).map((t) => t.join())).size).toBe(3);
    for (let b = 0; b < rowPrompts.length; b++) {
      const alone = await generate(m, [rowPrompts[b]], { ...opts, rowSeeds: [deriveSeed(opts.seed, b)] });
      expect(alone.tokens[0], `row ${b}`).toEqual(batched.tokens[b]);
      expectClose(alone.logprobs[0], batched.logprobs[b], `row ${b} logprobs`, 1e-4, 0);
    }
    m.dispose();
  });

  it('prefills long batches in bunches of rows and samples what one prefill of all rows samples', async () => {
    const m = model();
    const rowPrompts = Array.from({ length: 7 }, (_, b) =>
      Array.from({ length: 20 + b }, (_, t) => (b * 7 + t * 3) % 50),
    );
    const opts = { maxNewTokens: 8, temperature: 1, seed: 9 };
    const whole = await generate(m, rowPrompts, opts);
    // 4 heads × 26² scores per row: a budget of 6,000 floats allows 2 rows per forward, so 4 bunches.
    const bunched = await generate(m, rowPrompts, { ...opts, prefillScoreFloats: 6000 });
    expect(bunched.tokens).toEqual(whole.tokens);
    for (let b = 0; b < rowPrompts.length; b++)
      expectClose(bunched.logprobs[b], whole.logprobs[b], `row ${b} logprobs`, 1e-4, 0);
    m.dispose();
  });

  it('returns log-probs equal to the model log-probs of the sampled sequence (temperature 1)', async () => {
    const m = model();
    const out = await generate(m, prompts, { maxNewTokens: 6, temperature: 1, seed: 3 });
    const full = prompts.map((p, b) => [...p, ...out.tokens[b]]);
    const lp = await sequenceLogprobs(m, full);
    prompts.forEach((p, b) => expectClose(lp[b].slice(p.length - 1), out.logprobs[b], `row ${b}`, 1e-4, 0));
    m.dispose();
  });

  it('stops on a stop token (kept) and reports length otherwise', async () => {
    const m = model();
    const free = await generate(m, [[1, 2]], { maxNewTokens: 8, temperature: 0, seed: 0 });
    expect(free.tokens[0]).toHaveLength(8);
    expect(free.finishReasons[0]).toBe('length');
    const stopAt = free.tokens[0][2];
    const stopped = await generate(m, [[1, 2]], { maxNewTokens: 8, temperature: 0, seed: 0, stopTokens: [stopAt] });
    const firstStop = free.tokens[0].indexOf(stopAt);
    expect(stopped.tokens[0]).toEqual(free.tokens[0].slice(0, firstStop + 1));
    expect(stopped.finishReasons[0]).toBe('stop');
    m.dispose();
  });

  it('draws by the inverse of the distribution: the token where a uniform draw falls in the cumulative mass', () => {
    const logits = [0.5, -1, 2, 0, 1.5, -3];
    const temperature = 0.8;
    const weights = logits.map((x) => Math.exp(x / temperature - 2 / temperature));
    const total = weights.reduce((a, b) => a + b, 0);
    for (let seed = 0; seed < 200; seed++) {
      const u = createRng(seed).next() * total;
      let expected = 0;
      for (let acc = weights[0]; acc < u; acc += weights[++expected]);
      const drawn = sampleToken(logits, { temperature }, createRng(seed));
      expect(drawn.token).toBe(expected);
      expect(drawn.logprob).toBeCloseTo(Math.log(weights[expected] / total), 12);
    }
  });

  it('top-k and top-p restrict the candidates; greedy takes the argmax', () => {
    const logits = [0, 3, 1, 2.9, -1];
    const draws = (o: { temperature: number; topK?: number; topP?: number }) => {
      const rng = createRng(1);
      return new Set(Array.from({ length: 300 }, () => sampleToken(logits, o, rng).token));
    };
    expect([...draws({ temperature: 1, topK: 2 })].sort()).toEqual([1, 3]);
    expect([...draws({ temperature: 1, topP: 0.4 })]).toEqual([1]); // p(1) ≈ 0.47
    expect([...draws({ temperature: 1, topP: 0.5 })].sort()).toEqual([1, 3]);
    expect(draws({ temperature: 1 }).size).toBe(5);
    expect(sampleToken(logits, { temperature: 0 }, createRng(0)).token).toBe(1);
    const lp = sampleToken(logits, { temperature: 0 }, createRng(0)).logprob;
    expect(lp).toBeCloseTo(3 - Math.log(logits.reduce((s, v) => s + Math.exp(v), 0)), 6);
  });
});
