/** SmolLM2-135M-Instruct's config.json: the shapes the 135M-class benchmarks build with random weights. */
export const SMOLLM2_135M = {
  model_type: 'llama', architectures: ['LlamaForCausalLM'], hidden_size: 576, intermediate_size: 1536, num_hidden_layers: 30,
  num_attention_heads: 9, num_key_value_heads: 3, head_dim: 64, vocab_size: 49152, max_position_embeddings: 8192,
  rms_norm_eps: 1e-5, rope_theta: 100000, tie_word_embeddings: true, hidden_act: 'silu', torch_dtype: 'bfloat16',
  bos_token_id: 1, eos_token_id: 2,
};
