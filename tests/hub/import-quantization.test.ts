/**
 * An import that does not fit in float32 comes in int8 when that fits (`quantization: 'auto'`, what the
 * Models screen asks for): decided from config.json before any weight is read. A float32 load that does not
 * fit says that int8 would.
 */
import { describe, expect, it } from 'vitest';
import type { FileSource } from '../../src/hub/hf-layout.ts';
import { loadHfModel } from '../../src/hub/hf.ts';
import { useBackend } from '../model/helpers.ts';
import { tinyTokenizerJson } from '../tokenizer/tiny-hf-tokenizer.ts';

/** Qwen2.5-0.5B's config.json and a tokenizer, no weights: the memory check runs before the weights are read. */
const qwenConfigOnly: FileSource = {
  description: 'a Qwen2.5-0.5B config',
  read: async (name) =>
    name === 'config.json'
      ? new TextEncoder().encode(
          JSON.stringify({
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
            torch_dtype: 'bfloat16',
          }),
        )
      : name === 'tokenizer.json'
        ? new TextEncoder().encode(JSON.stringify(tinyTokenizerJson()))
        : null,
};
const heap = 4 * 2 ** 30;

describe('importing a model too large for float32', () => {
  it('refuses float32 naming int8, and with auto passes the memory check in int8', async () => {
    await useBackend('wasm');
    await expect(loadHfModel(qwenConfigOnly, { memoryLimitBytes: heap })).rejects.toThrow(
      /but 4\.00 GiB is available\. With its base in int8 \(model\.quantization: int8\) it would fit\./,
    );
    // Past the memory check: it fails only for want of weights.
    await expect(loadHfModel(qwenConfigOnly, { memoryLimitBytes: heap, quantization: 'auto' })).rejects.toThrow(
      /model\.safetensors/,
    );
  });
});
