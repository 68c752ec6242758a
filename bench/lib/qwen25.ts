/** Qwen2.5-0.5B-Instruct's config.json: the shape the 0.5B memory benchmark builds with random weights (nothing is downloaded). */
export const QWEN25_05B = {
  model_type: 'qwen2',
  architectures: ['Qwen2ForCausalLM'],
  hidden_size: 896,
  intermediate_size: 4864,
  num_hidden_layers: 24,
  num_attention_heads: 14,
  num_key_value_heads: 2,
  vocab_size: 151936,
  max_position_embeddings: 32768,
  rope_theta: 1000000,
  rms_norm_eps: 1e-6,
  tie_word_embeddings: true,
  hidden_act: 'silu',
  torch_dtype: 'bfloat16',
  bos_token_id: 151643,
  eos_token_id: 151645,
};
