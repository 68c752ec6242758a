/**
 * The model's shape: one typed object, the named size presets, and the mapping to and from a
 * Hugging Face `config.json` (Llama / Qwen2 families), so a Spindle model saves as an HF layout and
 * an HF checkpoint loads as a Spindle model.
 */

export interface ModelConfig {
  vocabSize: number;
  /** Width of the residual stream (C). */
  hiddenSize: number;
  /** Width of the SwiGLU hidden layer. */
  intermediateSize: number;
  numLayers: number;
  /** Query heads (H). */
  numHeads: number;
  /** Key/value heads (Hkv); H must be a multiple of it (grouped-query attention). */
  numKvHeads: number;
  /** Per-head width (D); C / H unless the checkpoint says otherwise. */
  headDim: number;
  maxPositions: number;
  ropeTheta: number;
  rmsNormEps: number;
  /** The output head reuses the embedding matrix. */
  tieWordEmbeddings: boolean;
  /** q/k/v projections carry a bias (Qwen2 does, Llama does not). */
  attentionBias: boolean;
  /** Which family the HF export names in `architectures`. */
  family: 'llama' | 'qwen2';
}

export type PresetName = 'nano' | 'micro' | 'mini';

/** Parameter counts are for the byte tokenizer's 266-token vocabulary with tied embeddings. */
export const PRESETS: Record<PresetName, Omit<ModelConfig, 'vocabSize'>> = {
  //          C     I    layers H  Hkv  D    → params
  nano: { hiddenSize: 128, intermediateSize: 384, numLayers: 5, numHeads: 4, numKvHeads: 2, headDim: 32, ...common(1024) }, //  ≈1.0M
  micro: { hiddenSize: 256, intermediateSize: 768, numLayers: 6, numHeads: 8, numKvHeads: 4, headDim: 32, ...common(1024) }, // ≈4.8M
  mini: { hiddenSize: 384, intermediateSize: 1024, numLayers: 12, numHeads: 6, numKvHeads: 2, headDim: 64, ...common(2048) }, // ≈19M
};

function common(maxPositions: number) {
  return { maxPositions, ropeTheta: 10000, rmsNormEps: 1e-5, tieWordEmbeddings: true, attentionBias: false, family: 'llama' as const };
}

export function presetConfig(name: PresetName, vocabSize: number, over: Partial<ModelConfig> = {}): ModelConfig {
  const preset = PRESETS[name];
  if (!preset) throw new Error(`Unknown model preset "${name}". Choose one of: ${Object.keys(PRESETS).join(', ')}.`);
  return validateConfig({ ...preset, vocabSize, ...over });
}

export function validateConfig(c: ModelConfig): ModelConfig {
  const positive = ['vocabSize', 'hiddenSize', 'intermediateSize', 'numLayers', 'numHeads', 'numKvHeads', 'headDim', 'maxPositions'] as const;
  for (const key of positive) {
    if (!Number.isInteger(c[key]) || c[key] <= 0) throw new Error(`Model config field "${key}" must be a positive integer, got ${c[key]}.`);
  }
  if (c.numHeads % c.numKvHeads !== 0) {
    throw new Error(`Model config: numHeads (${c.numHeads}) must be a multiple of numKvHeads (${c.numKvHeads}) for grouped-query attention.`);
  }
  if (c.headDim % 2 !== 0) throw new Error(`Model config: headDim (${c.headDim}) must be even for rotary embeddings.`);
  return c;
}

/** Exact number of parameters the model holds (embeddings counted once when tied). */
export function countParameters(c: ModelConfig): number {
  const C = c.hiddenSize;
  const q = C * c.numHeads * c.headDim;
  const kv = C * c.numKvHeads * c.headDim;
  const bias = c.attentionBias ? c.numHeads * c.headDim + 2 * c.numKvHeads * c.headDim : 0;
  const attention = 2 * q + 2 * kv + bias;
  const mlp = 3 * C * c.intermediateSize;
  const perLayer = attention + mlp + 2 * C;
  const embed = c.vocabSize * C;
  return c.numLayers * perLayer + embed + C + (c.tieWordEmbeddings ? 0 : embed);
}

/** Fields of an HF `config.json` this module reads or writes. */
export interface HfConfigJson {
  architectures?: string[];
  model_type?: string;
  vocab_size?: number;
  hidden_size?: number;
  intermediate_size?: number;
  num_hidden_layers?: number;
  num_attention_heads?: number;
  num_key_value_heads?: number;
  head_dim?: number;
  max_position_embeddings?: number;
  rope_theta?: number;
  rms_norm_eps?: number;
  tie_word_embeddings?: boolean;
  attention_bias?: boolean;
  mlp_bias?: boolean;
  hidden_act?: string;
  rope_scaling?: unknown;
  torch_dtype?: string;
  bos_token_id?: number | null;
  eos_token_id?: number | number[] | null;
  /** Spindle's own marker: which tokenizer a shipped model uses when there is no tokenizer.json. */
  spindle_tokenizer?: 'byte';
  [key: string]: unknown;
}

const SUPPORTED_TYPES = ['llama', 'qwen2'];

/** Reads an HF config; every unsupported feature is an error naming the field and what is supported. */
export function fromHfConfig(json: HfConfigJson): ModelConfig {
  const type = json.model_type ?? '';
  if (!SUPPORTED_TYPES.includes(type)) {
    throw new Error(
      `config.json: model_type "${type}" (architectures ${JSON.stringify(json.architectures ?? [])}) is not supported; expected one of ${SUPPORTED_TYPES.join(', ')} (Llama/Qwen2-style decoders).`,
    );
  }
  const need = (field: keyof HfConfigJson): number => {
    const v = json[field];
    if (typeof v !== 'number') throw new Error(`config.json: field "${String(field)}" is missing or not a number (got ${JSON.stringify(v)}).`);
    return v;
  };
  if (json.hidden_act && json.hidden_act !== 'silu') {
    throw new Error(`config.json: hidden_act "${json.hidden_act}" is not supported; expected "silu" (SwiGLU).`);
  }
  if (json.use_sliding_window === true) throw new Error('config.json: use_sliding_window=true is not supported; expected false (full attention).');
  if (json.mlp_bias) throw new Error('config.json: mlp_bias=true is not supported; expected false.');
  if (json.rope_scaling != null) {
    throw new Error(`config.json: rope_scaling ${JSON.stringify(json.rope_scaling)} is not supported; expected null (plain RoPE).`);
  }
  const hiddenSize = need('hidden_size');
  const numHeads = need('num_attention_heads');
  return validateConfig({
    vocabSize: need('vocab_size'),
    hiddenSize,
    intermediateSize: need('intermediate_size'),
    numLayers: need('num_hidden_layers'),
    numHeads,
    numKvHeads: json.num_key_value_heads ?? numHeads,
    headDim: json.head_dim ?? hiddenSize / numHeads,
    maxPositions: json.max_position_embeddings ?? 2048,
    ropeTheta: json.rope_theta ?? 10000,
    rmsNormEps: json.rms_norm_eps ?? 1e-6,
    tieWordEmbeddings: json.tie_word_embeddings ?? false,
    attentionBias: type === 'qwen2' ? true : Boolean(json.attention_bias),
    family: type as 'llama' | 'qwen2',
  });
}

export function toHfConfig(c: ModelConfig, extra: Partial<HfConfigJson> = {}): HfConfigJson {
  return {
    architectures: [c.family === 'qwen2' ? 'Qwen2ForCausalLM' : 'LlamaForCausalLM'],
    model_type: c.family,
    vocab_size: c.vocabSize,
    hidden_size: c.hiddenSize,
    intermediate_size: c.intermediateSize,
    num_hidden_layers: c.numLayers,
    num_attention_heads: c.numHeads,
    num_key_value_heads: c.numKvHeads,
    head_dim: c.headDim,
    max_position_embeddings: c.maxPositions,
    rope_theta: c.ropeTheta,
    rms_norm_eps: c.rmsNormEps,
    tie_word_embeddings: c.tieWordEmbeddings,
    ...(c.family === 'llama' ? { attention_bias: c.attentionBias, mlp_bias: false } : {}),
    hidden_act: 'silu',
    rope_scaling: null,
    torch_dtype: 'float32',
    ...extra,
  };
}
