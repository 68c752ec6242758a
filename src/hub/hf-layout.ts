/**
 * The tensors a Hugging Face checkpoint of a given config holds, by name and shape (HF [out, in]
 * layout), and the check of a loaded file against them: every tensor present with its shape, and no
 * tensor the config does not explain (a bias the config does not declare would otherwise be dropped
 * silently and every logit would be off); the files a model folder holds besides, and where a folder's files
 * come from (a FileSource: hub.ts's downloads, hf.ts's URLs, picked files and folders).
 */
import type { ModelConfig } from '../model/config.ts';
import { CHAT_TEMPLATE_FILE } from '../tokenizer/hf-tokenizer.ts';

/** Where the files of one model come from. `read` returns null when the file does not exist. */
export interface FileSource {
  description: string;
  read(name: string): Promise<Uint8Array | null>;
}

/** The tokenizer's files a model folder may hold beside config.json and the weights, each read when present. */
export const TOKENIZER_FILES = ['tokenizer.json', 'tokenizer_config.json', CHAT_TEMPLATE_FILE] as const;

/** name → shape of every parameter the config implies, in file order. */
export function expectedTensors(config: ModelConfig): Map<string, number[]> {
  const { hiddenSize: C, intermediateSize: I, numHeads: H, numKvHeads: Hkv, headDim: D, vocabSize: V } = config;
  const out = new Map<string, number[]>();
  out.set('model.embed_tokens.weight', [V, C]);
  for (let i = 0; i < config.numLayers; i++) {
    const p = `model.layers.${i}`;
    out.set(`${p}.input_layernorm.weight`, [C]);
    out.set(`${p}.post_attention_layernorm.weight`, [C]);
    for (const [m, rows] of [
      ['q', H * D],
      ['k', Hkv * D],
      ['v', Hkv * D],
    ] as const) {
      out.set(`${p}.self_attn.${m}_proj.weight`, [rows, C]);
      if (config.attentionBias) out.set(`${p}.self_attn.${m}_proj.bias`, [rows]);
    }
    out.set(`${p}.self_attn.o_proj.weight`, [C, H * D]);
    if (config.outputBias) out.set(`${p}.self_attn.o_proj.bias`, [C]);
    if (config.qkNorm) for (const m of ['q', 'k']) out.set(`${p}.self_attn.${m}_norm.weight`, [D]);
    for (const [m, shape] of [
      ['gate', [I, C]],
      ['up', [I, C]],
      ['down', [C, I]],
    ] as const) {
      out.set(`${p}.mlp.${m}_proj.weight`, [...shape]);
      if (config.mlpBias) out.set(`${p}.mlp.${m}_proj.bias`, [shape[0]]);
    }
  }
  out.set('model.norm.weight', [C]);
  if (!config.tieWordEmbeddings) out.set('lm_head.weight', [V, C]);
  return out;
}

/** The RoPE tables are the one allocation the config sizes alone (positions × head_dim, twice). */
const MAX_ROPE_VALUES = 1 << 26;

/** Tensors a file may hold that belong to no parameter but are harmless. */
function ignorable(name: string, config: ModelConfig): boolean {
  if (name.endsWith('rotary_emb.inv_freq')) return true; // older checkpoints store the RoPE table; we compute it
  return config.tieWordEmbeddings && name === 'lm_head.weight'; // some tied checkpoints store the copy
}

/**
 * Every tensor the config implies must be in the file with its shape, so a config claiming 100,000
 * layers fails here, naming the first missing tensor, before anything is allocated; and every tensor
 * in the file must be one the config implies.
 */
export function checkWeights(
  weights: { get(name: string): { shape: number[] } | undefined; keys(): Iterable<string> },
  config: ModelConfig,
  where: string,
): void {
  const D = config.headDim;
  if (config.maxPositions * D > MAX_ROPE_VALUES) {
    throw new Error(
      `config.json in ${where}: max_position_embeddings ${config.maxPositions} × head_dim ${D} needs a RoPE table over ${MAX_ROPE_VALUES} values; lower max_position_embeddings.`,
    );
  }
  const expected = expectedTensors(config);
  const declared = describe(config);
  for (const name of weights.keys()) {
    if (expected.has(name) || ignorable(name, config)) continue;
    const hint = /\.bias$/.test(name) ? ' (config.json declares no such bias: check attention_bias / mlp_bias)' : '';
    throw new Error(`model weights in ${where}: unexpected tensor "${name}" for ${declared}${hint}.`);
  }
  for (const [name, shape] of expected) {
    const t = weights.get(name);
    if (!t)
      throw new Error(
        `model weights in ${where}: tensor "${name}" is missing (expected shape [${shape.join(', ')}]); config.json declares ${declared}.`,
      );
    if (t.shape.length !== shape.length || t.shape.some((d, k) => d !== shape[k])) {
      throw new Error(
        `model weights in ${where}: tensor "${name}" has shape [${t.shape.join(', ')}], expected [${shape.join(', ')}]; config.json declares ${declared}.`,
      );
    }
  }
}

function describe(c: ModelConfig): string {
  const extras = [
    c.attentionBias && 'q/k/v bias',
    c.outputBias && 'o_proj bias',
    c.mlpBias && 'MLP bias',
    c.qkNorm && 'q/k norms',
  ].filter(Boolean);
  return `a ${c.family} model with ${c.numLayers} layers, hidden size ${c.hiddenSize}${extras.length ? `, ${extras.join(', ')}` : ''}`;
}
