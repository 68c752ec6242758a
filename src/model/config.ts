/**
 * The model's shape: one typed object, the named size presets, and the mapping to and from a
 * Hugging Face `config.json` (Llama / Qwen2 / Qwen3 families, transformers-4 and -5 field names), so
 * a Spindle model saves as an HF layout and an HF checkpoint loads as a Spindle model. Every field
 * that changes the computation is read or refused by name: nothing loads silently with a default.
 */
import { readRope, ropeScalingJson, type RopeScaling } from './rope.ts';

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
  /** o_proj carries a bias (Llama/Qwen3 `attention_bias: true`; Qwen2 never). */
  outputBias?: boolean;
  /** gate/up/down projections carry a bias (Llama `mlp_bias: true`). */
  mlpBias?: boolean;
  /** Per-head RMSNorm of queries and keys before RoPE (Qwen3's q_norm / k_norm). */
  qkNorm?: boolean;
  /** RoPE frequency scaling (llama3, linear); absent for plain RoPE. */
  ropeScaling?: RopeScaling;
  /** Which family the HF export names in `architectures`. */
  family: ModelFamily;
}

export type ModelFamily = 'llama' | 'qwen2' | 'qwen3';

export type PresetName = 'nano' | 'micro' | 'mini';

/** Parameter counts are for the byte tokenizer's 266-token vocabulary with tied embeddings. */
export const PRESETS: Record<PresetName, Omit<ModelConfig, 'vocabSize'>> = {
  //          C     I    layers H  Hkv  D    → params
  nano: {
    hiddenSize: 128,
    intermediateSize: 384,
    numLayers: 5,
    numHeads: 4,
    numKvHeads: 2,
    headDim: 32,
    ...common(1024),
  }, //  ≈1.0M
  micro: {
    hiddenSize: 256,
    intermediateSize: 768,
    numLayers: 6,
    numHeads: 8,
    numKvHeads: 4,
    headDim: 32,
    ...common(1024),
  }, // ≈4.8M
  mini: {
    hiddenSize: 384,
    intermediateSize: 1024,
    numLayers: 12,
    numHeads: 6,
    numKvHeads: 2,
    headDim: 64,
    ...common(2048),
  }, // ≈19M
};

function common(maxPositions: number) {
  return {
    maxPositions,
    ropeTheta: 10000,
    rmsNormEps: 1e-5,
    tieWordEmbeddings: true,
    attentionBias: false,
    family: 'llama' as const,
  };
}

export function presetConfig(name: PresetName, vocabSize: number, over: Partial<ModelConfig> = {}): ModelConfig {
  const preset = PRESETS[name];
  if (!preset) throw new Error(`Unknown model preset "${name}". Choose one of: ${Object.keys(PRESETS).join(', ')}.`);
  return validateConfig({ ...preset, vocabSize, ...over });
}

export function validateConfig(c: ModelConfig): ModelConfig {
  const positive = [
    'vocabSize',
    'hiddenSize',
    'intermediateSize',
    'numLayers',
    'numHeads',
    'numKvHeads',
    'headDim',
    'maxPositions',
  ] as const;
  for (const key of positive) {
    if (!Number.isInteger(c[key]) || c[key] <= 0)
      throw new Error(`Model config field "${key}" must be a positive integer, got ${c[key]}.`);
  }
  if (c.numHeads % c.numKvHeads !== 0) {
    throw new Error(
      `Model config: numHeads (${c.numHeads}) must be a multiple of numKvHeads (${c.numKvHeads}) for grouped-query attention.`,
    );
  }
  if (c.headDim % 2 !== 0) throw new Error(`Model config: headDim (${c.headDim}) must be even for rotary embeddings.`);
  return c;
}

/** Exact number of parameters the model holds (embeddings counted once when tied). */
export function countParameters(c: ModelConfig): number {
  const C = c.hiddenSize;
  const q = C * c.numHeads * c.headDim;
  const kv = C * c.numKvHeads * c.headDim;
  const bias = (c.attentionBias ? c.numHeads * c.headDim + 2 * c.numKvHeads * c.headDim : 0) + (c.outputBias ? C : 0);
  const attention = 2 * q + 2 * kv + bias + (c.qkNorm ? 2 * c.headDim : 0);
  const mlp = 3 * C * c.intermediateSize + (c.mlpBias ? 2 * c.intermediateSize + C : 0);
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
  /** transformers 5: `{rope_type, rope_theta, factor, …}` in place of rope_theta + rope_scaling. */
  rope_parameters?: unknown;
  torch_dtype?: string;
  /** transformers 5's name for torch_dtype. */
  dtype?: string;
  bos_token_id?: number | null;
  eos_token_id?: number | number[] | null;
  /** Spindle's own marker: which tokenizer a shipped model uses when there is no tokenizer.json. */
  spindle_tokenizer?: 'byte';
  [key: string]: unknown;
}

const SUPPORTED_TYPES: ModelFamily[] = ['llama', 'qwen2', 'qwen3'];

/** Reads an HF config; every unsupported feature is an error naming the field and what is supported. */
export function fromHfConfig(json: HfConfigJson): ModelConfig {
  const type = json.model_type ?? '';
  if (!(SUPPORTED_TYPES as string[]).includes(type)) {
    throw new Error(
      `config.json: model_type "${type}" (architectures ${JSON.stringify(json.architectures ?? [])}) is not supported; expected one of ${SUPPORTED_TYPES.join(', ')} (Llama/Qwen2/Qwen3-style decoders).`,
    );
  }
  const family = type as ModelFamily;
  const need = (field: keyof HfConfigJson): number => {
    const v = json[field];
    if (typeof v !== 'number')
      throw new Error(`config.json: field "${String(field)}" is missing or not a number (got ${JSON.stringify(v)}).`);
    return v;
  };
  if (json.hidden_act && json.hidden_act !== 'silu') {
    throw new Error(`config.json: hidden_act "${json.hidden_act}" is not supported; expected "silu" (SwiGLU).`);
  }
  if (json.use_sliding_window === true)
    throw new Error('config.json: use_sliding_window=true is not supported; expected false (full attention).');
  const layerTypes = json.layer_types;
  if (Array.isArray(layerTypes) && layerTypes.some((t) => t !== 'full_attention')) {
    throw new Error(
      `config.json: layer_types ${JSON.stringify([...new Set(layerTypes)])} is not supported; expected only "full_attention".`,
    );
  }
  if (json.pretraining_tp != null && json.pretraining_tp !== 1)
    throw new Error(`config.json: pretraining_tp ${JSON.stringify(json.pretraining_tp)} is not supported; expected 1.`);
  // Qwen2 always biases q/k/v and never o_proj or the MLP; Llama and Qwen3 follow attention_bias for all four
  // attention projections, and Llama's mlp_bias biases the MLP.
  const attentionBias = family === 'qwen2' ? true : Boolean(json.attention_bias);
  const mlpBias = family === 'llama' ? Boolean(json.mlp_bias) : false;
  if (family !== 'llama' && json.mlp_bias)
    throw new Error(
      `config.json: mlp_bias=true is not supported for ${family} (transformers ignores it there); expected false.`,
    );
  const hiddenSize = need('hidden_size');
  const numHeads = need('num_attention_heads');
  const rope = readRope(json);
  return validateConfig({
    vocabSize: need('vocab_size'),
    hiddenSize,
    intermediateSize: need('intermediate_size'),
    numLayers: need('num_hidden_layers'),
    numHeads,
    numKvHeads: json.num_key_value_heads ?? numHeads,
    headDim: json.head_dim ?? hiddenSize / numHeads,
    maxPositions: json.max_position_embeddings ?? 2048,
    ropeTheta: rope.theta,
    rmsNormEps: json.rms_norm_eps ?? 1e-6,
    tieWordEmbeddings: json.tie_word_embeddings ?? false,
    attentionBias,
    ...(family !== 'qwen2' && attentionBias ? { outputBias: true } : {}),
    ...(mlpBias ? { mlpBias: true } : {}),
    ...(family === 'qwen3' ? { qkNorm: true } : {}),
    ...(rope.scaling ? { ropeScaling: rope.scaling } : {}),
    family,
  });
}

export function toHfConfig(c: ModelConfig, extra: Partial<HfConfigJson> = {}): HfConfigJson {
  if (c.family === 'qwen2' && (c.outputBias || c.mlpBias || !c.attentionBias)) {
    throw new Error(
      'toHfConfig: a qwen2 model has q/k/v biases and no o_proj or MLP bias; use family "llama" for other bias layouts.',
    );
  }
  if (c.family !== 'llama' && c.mlpBias)
    throw new Error(`toHfConfig: mlp_bias exists only in family "llama", not "${c.family}".`);
  if (c.family !== 'qwen2' && c.attentionBias !== Boolean(c.outputBias)) {
    throw new Error(
      `toHfConfig: ${c.family}'s attention_bias biases q/k/v and o_proj together; attentionBias and outputBias must agree.`,
    );
  }
  if (Boolean(c.qkNorm) !== (c.family === 'qwen3'))
    throw new Error('toHfConfig: q/k norms are exactly what family "qwen3" has.');
  const architecture = { llama: 'LlamaForCausalLM', qwen2: 'Qwen2ForCausalLM', qwen3: 'Qwen3ForCausalLM' }[c.family];
  return {
    architectures: [architecture],
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
    ...(c.family === 'llama' ? { attention_bias: c.attentionBias, mlp_bias: Boolean(c.mlpBias) } : {}),
    ...(c.family === 'qwen3' ? { attention_bias: c.attentionBias } : {}),
    hidden_act: 'silu',
    rope_scaling: ropeScalingJson(c.ropeScaling),
    torch_dtype: 'float32',
    ...extra,
  };
}
