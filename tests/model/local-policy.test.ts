/** LocalPolicy: a tiny model taught one reply by a few SFT steps, then driven through the Policy interface. */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ByteTokenizer } from '../../src/tokenizer/byte-tokenizer.ts';
import { crossEntropyLoss } from '../../src/model/logprobs.ts';
import { TransformerModel } from '../../src/model/transformer.ts';
import { LocalPolicy } from '../../src/rollout/local-policy.ts';
import { useBackend } from './helpers.ts';

const tok = new ByteTokenizer();
const prompt = tok.encode('<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n');
const reply = 'héllo';
let model: TransformerModel;

beforeAll(async () => {
  await useBackend('wasm');
  model = TransformerModel.create(
    {
      vocabSize: tok.vocabSize,
      hiddenSize: 32,
      intermediateSize: 64,
      numLayers: 2,
      numHeads: 4,
      numKvHeads: 2,
      headDim: 8,
      maxPositions: 64,
      ropeTheta: 10000,
      rmsNormEps: 1e-5,
      tieWordEmbeddings: true,
      attentionBias: false,
      family: 'llama',
    },
    1,
  );
  const sequence = [...prompt, ...tok.encode(reply), tok.imEndId];
  // 1e-2: at 3e-2 the loss spikes back up after reaching ~0.1, and whether 60 steps end on the reply
  // turned on float32 rounding. Here the loss falls smoothly to ~0.003 on every backend.
  const optimizer = tf.train.adam(1e-2);
  for (let step = 0; step < 120; step++) {
    optimizer.minimize(() => crossEntropyLoss(model, [sequence]), false, model.trainableVariables());
  }
  optimizer.dispose();
});

describe('LocalPolicy', () => {
  const sampling = { temperature: 0, top_k: 0, top_p: 1, max_new_tokens: 20 };

  it('continues the context tokens, stops on <|im_end|> and streams the text', async () => {
    const policy = new LocalPolicy(model, tok);
    const pieces: string[] = [];
    const turn = await policy.generate(
      { messages: [], tools: [], tokens: prompt },
      { seed: 1, sampling, onText: (p) => pieces.push(p) },
    );
    expect(turn.text).toBe(reply);
    expect(turn.tokens).toEqual([...tok.encode(reply), tok.imEndId]);
    expect(turn.logprobs).toHaveLength(turn.tokens.length);
    expect(turn.finish_reason).toBe('stop');
    expect(pieces.join('')).toBe(reply);
    expect(pieces).not.toContain('\uFFFD');
  });

  it('reports length when the budget runs out, and is reproducible with a seed', async () => {
    const policy = new LocalPolicy(model, tok);
    const short = await policy.generate(
      { messages: [], tools: [], tokens: prompt },
      { seed: 1, sampling: { ...sampling, max_new_tokens: 2 } },
    );
    expect(short.finish_reason).toBe('length');
    expect(short.tokens).toHaveLength(2);
    const hot = { ...sampling, temperature: 2 };
    const a = await policy.generate({ messages: [], tools: [], tokens: prompt }, { seed: 5, sampling: hot });
    const b = await policy.generate({ messages: [], tools: [], tokens: prompt }, { seed: 5, sampling: hot });
    expect(b).toEqual(a);
  });

  it('asks for context tokens instead of guessing', async () => {
    const policy = new LocalPolicy(model, tok);
    await expect(policy.generate({ messages: [], tools: [], tokens: [] }, { seed: 1, sampling })).rejects.toThrow(
      /needs context\.tokens/,
    );
  });
});
