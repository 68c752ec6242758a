/**
 * A Llama/Qwen2/Qwen3-style decoder-only transformer for tfjs, in the order of the paper:
 * attention → MLP → block → model. Sampling is in sampling.ts, log-probabilities for the losses in
 * logprobs.ts, LoRA in lora.ts, weight files in hub/safetensors.ts / hub/hf.ts.
 *
 * Conventions
 * - Parameters are named exactly like Hugging Face Llama (`model.layers.0.self_attn.q_proj.weight`),
 *   so HF checkpoints and PEFT adapters map one to one.
 * - Linear weights are held TRANSPOSED relative to HF: [in, out] instead of torch's [out, in]. The
 *   forward pass is then `x · W` with no transpose at all, which matters on tfjs-wasm (ops.ts).
 *   `getWeights`/`setWeights` speak the HF layout and transpose at the boundary.
 * - Grouped-query attention folds the query heads that share a key/value head into the time axis
 *   ([B, Hkv, rep·T, D]) instead of repeating k and v, so no key/value copy is ever made.
 * - Every method that makes tensors is meant to run inside the caller's `tf.tidy`/`tf.variableGrads`.
 */
import * as tf from '@tensorflow/tfjs';
import { type ModelConfig, validateConfig } from './config.ts';
import { ATTENTION_MASKED, decodeInput, partsOf, type DecodeStepAttrs } from '../kernels/decode-step.ts';
import {
  DECODE_STEP_KERNEL,
  HALF_MATMUL_KERNEL,
  HALF_WIDEN_KERNEL,
  hasFusedKernel,
  INT8_WIDEN_KERNEL,
} from '../kernels/fused.ts';
import { fromHalfBits, packHalf, toHalfBits, unpackHalf, type HalfFormat } from '../kernels/half.ts';
import {
  applyRope,
  bmm,
  causalAttention,
  embed,
  fusedAttention,
  halfMatMul,
  loraLinear,
  maskedSoftmax,
  mm,
  mmT,
  rmsNorm,
  ropeTables,
  softmax,
  swiglu,
} from './ops.ts';
import { recomputeNeeded } from './memory.ts';
import { recomputed, recomputedBlock } from './recompute.ts';
import { int8MatMul, int8Values, int8Weight, type Int8Weight } from './int8.ts';
import { ropeInverseFrequencies } from './rope.ts';
import { createRng, deriveSeed, normalArray } from '../rng.ts';

/** A tensor on the host: HF layout, float32. What weight files, fixtures and adapters exchange. */
export interface HostTensor {
  shape: number[];
  data: Float32Array;
}
export type HostTensors = Map<string, HostTensor>;

export interface LoraPair {
  /** [in, r] (PEFT's lora_A.weight is its transpose, [r, in]). */
  A: tf.Variable;
  /** [r, out] (PEFT's lora_B.weight is its transpose, [out, r]). */
  B: tf.Variable;
}

/** A frozen linear weight held in 16 bits on the GPU (kernels/half.ts, kernels/webgpu/half-matmul.ts). */
export interface HalfWeight {
  /** The [in, out] values, packed two per int32 word: [in, out/2]. */
  packed: tf.Tensor2D;
  format: HalfFormat;
  shape: [number, number];
}

export interface Linear {
  /** HF module path, e.g. `model.layers.0.self_attn.q_proj`. */
  name: string;
  /** [in, out] float32; null when the weight is held in half precision (`half`) or int8 (`int8`). */
  weight: tf.Variable | null;
  half: HalfWeight | null;
  /** The frozen base's int8 weight (int8.ts), or null. */
  int8: Int8Weight | null;
  /** [out] */
  bias: tf.Variable | null;
  lora: LoraPair | null;
}

/** One base parameter, by HF name (namedParameters). */
export type NamedParameter = { name: string; transposed: boolean; layer: number | null } & (
  | { variable: tf.Variable; half?: undefined; int8?: undefined }
  | { variable: null; half: HalfWeight; int8?: undefined }
  | { variable: null; half?: undefined; int8: Int8Weight }
);

/** How the frozen projections are held: float32 variables, 16-bit (WebGPU), or int8 with per-channel scales. */
type LinearFormat = { half: HalfFormat } | 'int8' | null;

export const TARGET_MODULES = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const;
export type TargetModule = (typeof TARGET_MODULES)[number];

export interface LayerWeights {
  inputNorm: tf.Variable; // [C]
  /** Qwen3's per-head query/key RMSNorm weights, [D] each; null elsewhere. */
  qNorm: tf.Variable | null;
  kNorm: tf.Variable | null;
  q_proj: Linear; // [C, H·D]
  k_proj: Linear; // [C, Hkv·D]
  v_proj: Linear; // [C, Hkv·D]
  o_proj: Linear; // [H·D, C]
  postNorm: tf.Variable; // [C]
  gate_proj: Linear; // [C, I]
  up_proj: Linear; // [C, I]
  down_proj: Linear; // [I, C]
}

export interface LoraSettings {
  r: number;
  alpha: number;
  dropout: number;
  targetModules: TargetModule[];
  /** Layers that carry adapters (frozen layers do not). */
  layers: number[];
}

/**
 * Past keys and values per layer: [B, Hkv, capacity, D] each, of which the first `length` positions are
 * the cache; capacity ≥ length (the decoding kernel leaves room to append in place, kernels/decode-step.ts).
 */
export interface KVCache {
  k: tf.Tensor4D[];
  v: tf.Tensor4D[];
  length: number;
  /**
   * Positions to make room for when a decoding step must grow the cache (generate sets the prompt plus
   * every token it may add, so the cache grows once): each growth is a fresh buffer, copied into and
   * touched for the first time, which cost a batch-16 step of the micro preset ~40 ms every 64 positions.
   */
  reserve?: number;
}

export interface ForwardOptions {
  /** Keys/values of earlier positions; the result carries the extended cache. */
  cache?: KVCache | null;
  /** Per-row positions [B][T] (left-padded batches); default `past + t`. */
  positions?: number[][];
  /** Per-row validity of every key [B][Tpast + T] (false on padding); default all valid. */
  keyValid?: boolean[][];
  /** Apply LoRA adapters (default: the model's `loraEnabled`). False gives the reference policy. */
  useLora?: boolean;
  /** Only compute logits of the last position ([B, 1, V]); for generation. */
  lastOnly?: boolean;
  /** Training forward: LoRA dropout is applied, seeded by this. */
  dropoutSeed?: number;
  /**
   * Recompute each block's activations in the backward pass instead of keeping them (recompute.ts);
   * default: the model's `recompute` setting. Only a forward pass under a gradient tape recomputes.
   */
  recompute?: boolean;
  /**
   * The rows continue shared prefixes (train/shared-prefix.ts): each prefix runs once and every row reads
   * its keys and values, so a group's prompt is not run once per member. Gradients flow into the prefix.
   */
  prefix?: SharedPrefixInput;
}

/** Prefixes [Np, P] (right-padded), their real lengths, and which prefix each of the B rows continues. */
export interface SharedPrefixInput {
  ids: tf.Tensor2D;
  lengths: number[];
  rowPrefix: number[];
}

/** When a training forward pass recomputes its blocks (the run config's `training.gradient_checkpointing`). */
export type RecomputeSetting = 'auto' | 'on' | 'off';

export interface ForwardResult {
  logits: tf.Tensor3D; // [B, T, V]
  cache: KVCache | null;
}

interface Context {
  cos: tf.Tensor;
  sin: tf.Tensor;
  bias: tf.Tensor | null;
  useLora: boolean;
  dropoutSeed: number | null;
  /** False for generation (lastOnly), which records no gradient: ops may skip their gradient bookkeeping. */
  differentiable: boolean;
}

export class TransformerModel {
  readonly config: ModelConfig;
  readonly embedTokens: tf.Variable; // [V, C]
  readonly layers: LayerWeights[];
  readonly norm: tf.Variable; // [C]
  /** [C, V]; null when tied to the embedding. */
  readonly lmHead: tf.Variable | null;
  /** Generation's copy of the tied head, and the embedding data it was made from. */
  private tiedHead: { of: object; tensor: tf.Tensor } | null = null;
  lora: LoraSettings | null = null;
  loraEnabled = true;
  /** Layers whose weights do not train (`lora.freeze_layers`, e.g. `0-8`). */
  frozenLayers = new Set<number>();
  /** Whether the embedding (and a tied head) trains in full fine-tuning. */
  trainEmbeddings = true;
  /** Gradient checkpointing per block: 'auto' turns it on when memory.ts says the plain step would not fit. */
  recompute: RecomputeSetting = 'auto';
  private readonly rope: { cos: tf.Tensor2D; sin: tf.Tensor2D; rotate: tf.Tensor2D };

  private constructor(
    config: ModelConfig,
    init: (name: string, shape: number[]) => Float32Array,
    format: LinearFormat = null,
  ) {
    const halfFormat = format && format !== 'int8' ? format.half : null;
    this.config = validateConfig(config);
    const { hiddenSize: C, intermediateSize: I, numHeads: H, numKvHeads: Hkv, headDim: D, vocabSize: V } = config;
    // tidy: the initial tensor a variable is made from is its own tensor, and would outlive dispose().
    const variable = (name: string, shape: number[]) => tf.tidy(() => tf.variable(tf.tensor(init(name, shape), shape)));
    // Half-precision linears start as packed zeros (half the memory of float32 ones); setWeights fills them.
    const linear = (name: string, inDim: number, outDim: number, bias: boolean): Linear => ({
      name,
      weight: format ? null : variable(`${name}.weight`, [inDim, outDim]),
      half: halfFormat
        ? {
            packed: packHalf(new Uint16Array(inDim * outDim), inDim, outDim),
            format: halfFormat,
            shape: [inDim, outDim],
          }
        : null,
      // int8 linears are quantized from their initial values (zeros for a load), so an int8 model never holds its projections in float32.
      int8: format === 'int8' ? int8Weight(init(`${name}.weight`, [inDim, outDim]), inDim, outDim) : null,
      bias: bias ? variable(`${name}.bias`, [outDim]) : null,
      lora: null,
    });
    this.embedTokens = variable('model.embed_tokens.weight', [V, C]);
    this.layers = [];
    for (let i = 0; i < config.numLayers; i++) {
      const p = `model.layers.${i}`;
      this.layers.push({
        inputNorm: variable(`${p}.input_layernorm.weight`, [C]),
        qNorm: config.qkNorm ? variable(`${p}.self_attn.q_norm.weight`, [D]) : null,
        kNorm: config.qkNorm ? variable(`${p}.self_attn.k_norm.weight`, [D]) : null,
        q_proj: linear(`${p}.self_attn.q_proj`, C, H * D, config.attentionBias),
        k_proj: linear(`${p}.self_attn.k_proj`, C, Hkv * D, config.attentionBias),
        v_proj: linear(`${p}.self_attn.v_proj`, C, Hkv * D, config.attentionBias),
        o_proj: linear(`${p}.self_attn.o_proj`, H * D, C, Boolean(config.outputBias)),
        postNorm: variable(`${p}.post_attention_layernorm.weight`, [C]),
        gate_proj: linear(`${p}.mlp.gate_proj`, C, I, Boolean(config.mlpBias)),
        up_proj: linear(`${p}.mlp.up_proj`, C, I, Boolean(config.mlpBias)),
        down_proj: linear(`${p}.mlp.down_proj`, I, C, Boolean(config.mlpBias)),
      });
    }
    this.norm = variable('model.norm.weight', [C]);
    this.lmHead = config.tieWordEmbeddings ? null : variable('lm_head.weight', [C, V]);
    this.rope = ropeTables(
      config.maxPositions,
      D,
      ropeInverseFrequencies(D, config.ropeTheta, config.ropeScaling ?? null),
    );
  }

  /**
   * A fresh model from `seed`: norms at 1, biases at 0, weights N(0, 0.02²), except the projections
   * that write into the residual stream (o_proj, down_proj), scaled by 1/√(2·layers) as in GPT-2 so
   * the stream's variance does not grow with depth. With `quantization: 'int8'` the projections are
   * quantized as they are drawn (the memory benchmark's 0.5B base, which never exists in float32).
   */
  static create(config: ModelConfig, seed = 0, quantization: 'none' | 'int8' = 'none'): TransformerModel {
    if (quantization === 'int8') assertInt8Backend();
    const residualStd = 0.02 / Math.sqrt(2 * config.numLayers);
    return new TransformerModel(
      config,
      (name, shape) => {
        const size = shape.reduce((a, b) => a * b, 1);
        if (name.endsWith('norm.weight')) return new Float32Array(size).fill(1);
        if (name.endsWith('.bias')) return new Float32Array(size);
        const std = /(o_proj|down_proj)\.weight$/.test(name) ? residualStd : 0.02;
        return normalArray(createRng(deriveSeed(seed, name)), size, std);
      },
      quantization === 'int8' ? 'int8' : null,
    );
  }

  /**
   * A model holding the given HF-layout weights (checked against the config). With `halfLinears`, the
   * seven projections of every layer are held in that 16-bit format, frozen: LoRA trains on top of
   * them, and full fine-tuning widens the layers it trains (lora.ts's freezeLayers). This needs a
   * backend with the half matmul kernel (WebGPU). With `quantization: 'int8'`, they are quantized a
   * tensor at a time as they are set (int8.ts), frozen, for LoRA (wasm, WebGPU, cpu).
   */
  static fromWeights(
    config: ModelConfig,
    weights: HostTensors,
    source = 'weights',
    halfLinears: HalfFormat | null = null,
    quantization: 'none' | 'int8' = 'none',
  ): TransformerModel {
    if (halfLinears && !hasFusedKernel(HALF_MATMUL_KERNEL)) {
      throw new Error(
        `Half-precision weights run on WebGPU only; the ${tf.getBackend()} backend has no half matmul. Load the model in float32.`,
      );
    }
    if (quantization === 'int8') assertInt8Backend();
    const format: LinearFormat = quantization === 'int8' ? 'int8' : halfLinears ? { half: halfLinears } : null;
    const model = new TransformerModel(
      config,
      (_name, shape) => new Float32Array(shape.reduce((a, b) => a * b, 1)),
      format,
    );
    try {
      model.setWeights(weights, source);
    } catch (err) {
      model.dispose();
      throw err;
    }
    return model;
  }

  // ── Attention ────────────────────────────────────────────────────────────────────────────────

  private linear(l: Linear, x: tf.Tensor, ctx: Context, seedOffset: number): tf.Tensor {
    if (
      l.lora &&
      ctx.useLora &&
      this.lora &&
      l.weight &&
      ctx.differentiable &&
      !(this.lora.dropout > 0 && ctx.dropoutSeed !== null)
    ) {
      return loraLinear(
        x,
        l.weight as tf.Tensor2D,
        l.bias,
        l.lora.A as tf.Tensor2D,
        l.lora.B as tf.Tensor2D,
        this.lora.alpha / this.lora.r,
      ); // one op, fewer activations kept (ops.ts)
    }
    let y = l.int8 ? int8MatMul(x, l.int8) : l.half ? halfMatMul(x, l.half) : mm(x, l.weight!); // [..., out]
    if (l.bias) y = tf.add(y, l.bias);
    if (l.lora && ctx.useLora && this.lora) {
      const { r, alpha, dropout } = this.lora;
      const xin =
        dropout > 0 && ctx.dropoutSeed !== null
          ? tf.dropout(x, dropout, undefined, deriveSeed(ctx.dropoutSeed, seedOffset))
          : x;
      const delta = mm(mm(xin, l.lora.A), l.lora.B); // [..., r] → [..., out]
      y = tf.add(y, tf.mul(delta, alpha / r));
    }
    return y;
  }

  /** [B, T, n·D] → [B, n, T, D] */
  private splitHeads(x: tf.Tensor, n: number): tf.Tensor4D {
    const [B, T] = x.shape as number[];
    const D = this.config.headDim;
    // One position (a decoding step): swapping T and the heads moves no data, so one reshape does it.
    return (T === 1 ? x.reshape([B, n, 1, D]) : x.reshape([B, T, n, D]).transpose([0, 2, 1, 3])) as tf.Tensor4D;
  }

  private attention(
    i: number,
    x: tf.Tensor3D,
    ctx: Context,
    cache: KVCache | null,
    newCache: KVCache | null,
  ): tf.Tensor3D {
    const { numHeads: H, numKvHeads: Hkv, headDim: D } = this.config;
    const layer = this.layers[i];
    const [B, T] = x.shape;
    const rep = H / Hkv;
    const eps = this.config.rmsNormEps;
    // Qwen3 normalises each head of q and k (over D) before the rotation.
    const headNorm = (t: tf.Tensor4D, w: tf.Variable | null) =>
      w ? (rmsNorm(t, w as tf.Tensor1D, eps) as tf.Tensor4D) : t;
    const q = applyRope(
      headNorm(this.splitHeads(this.linear(layer.q_proj, x, ctx, i * 8 + 0), H), layer.qNorm),
      ctx.cos,
      ctx.sin,
      this.rope.rotate,
    ); // [B, H, T, D]
    let k = applyRope(
      headNorm(this.splitHeads(this.linear(layer.k_proj, x, ctx, i * 8 + 1), Hkv), layer.kNorm),
      ctx.cos,
      ctx.sin,
      this.rope.rotate,
    ); // [B, Hkv, T, D]
    let v = this.splitHeads(this.linear(layer.v_proj, x, ctx, i * 8 + 2), Hkv); // [B, Hkv, T, D]
    if (cache && cache.length > 0) {
      const past = (t: tf.Tensor4D) =>
        t.shape[2] === cache.length ? t : t.slice([0, 0, 0, 0], [-1, -1, cache.length, -1]); // [B, Hkv, Tpast, D]
      k = tf.concat([past(cache.k[i]), k], 2); // [B, Hkv, Tk, D]
      v = tf.concat([past(cache.v[i]), v], 2); // [B, Hkv, Tk, D]
    }
    if (newCache) {
      newCache.k.push(k);
      newCache.v.push(v);
    }
    const qGrouped = q.reshape([B, Hkv, rep * T, D]) as tf.Tensor4D; // query heads sharing a kv head, stacked on time
    const heads = (this.fusedAttention(qGrouped, k, v, ctx, T) ?? this.attentionProducts(qGrouped, k, v, ctx)).reshape([
      B,
      H,
      T,
      D,
    ]); // [B, H, T, D]
    const merged = (T === 1 ? heads : heads.transpose([0, 2, 1, 3])).reshape([B, T, H * D]); // [B, T, H·D]
    return this.linear(layer.o_proj, merged, ctx, i * 8 + 3) as tf.Tensor3D; // [B, T, C]
  }

  // ── MLP (SwiGLU) ─────────────────────────────────────────────────────────────────────────────

  /** Attention as one kernel where the backend has it: generation's, or training's with its gradient (a whole masked sequence); null otherwise. */
  private fusedAttention(q: tf.Tensor4D, k: tf.Tensor4D, v: tf.Tensor4D, ctx: Context, T: number): tf.Tensor | null {
    const scale = 1 / Math.sqrt(this.config.headDim);
    if (ctx.differentiable) return ctx.bias ? causalAttention(q, k, v, ctx.bias, scale, T) : null;
    return fusedAttention(q, k, v, ctx.bias, scale, T);
  }

  /** softmax(q·kᵀ/√D + bias)·v: q [B, Hkv, rep·T, D], k, v [B, Hkv, Tk, D] → [B, Hkv, rep·T, D]. */
  private attentionProducts(q: tf.Tensor, k: tf.Tensor, v: tf.Tensor, ctx: Context): tf.Tensor {
    const D = q.shape[3] as number;
    const scores = bmm(q, k, true) as tf.Tensor4D; // [B, Hkv, rep·T, Tk]
    // bias [B|1, 1, 1, T, Tk] or [T, Tk]; none when every query sees every key (one position, no padding).
    const probabilities = ctx.bias
      ? maskedSoftmax(scores, ctx.bias, 1 / Math.sqrt(D))
      : softmax(tf.mul(scores, 1 / Math.sqrt(D)));
    return bmm(probabilities, v); // [B, Hkv, rep·T, D]
  }

  private mlp(i: number, x: tf.Tensor3D, ctx: Context): tf.Tensor3D {
    const layer = this.layers[i];
    const gate = this.linear(layer.gate_proj, x, ctx, i * 8 + 4); // [B, T, I]
    const up = this.linear(layer.up_proj, x, ctx, i * 8 + 5); // [B, T, I]
    return this.linear(layer.down_proj, swiglu(gate, up), ctx, i * 8 + 6) as tf.Tensor3D; // [B, T, C]
  }

  // ── Block (pre-norm residual) ────────────────────────────────────────────────────────────────

  private block(i: number, x: tf.Tensor3D, ctx: Context, cache: KVCache | null, newCache: KVCache | null): tf.Tensor3D {
    const eps = this.config.rmsNormEps;
    const layer = this.layers[i];
    const h = tf.add(
      x,
      this.attention(i, rmsNorm(x, layer.inputNorm as tf.Tensor1D, eps) as tf.Tensor3D, ctx, cache, newCache),
    ); // [B, T, C]
    return tf.add(h, this.mlp(i, rmsNorm(h, layer.postNorm as tf.Tensor1D, eps) as tf.Tensor3D, ctx)) as tf.Tensor3D; // [B, T, C]
  }

  // ── Model ────────────────────────────────────────────────────────────────────────────────────

  /** ids [B, T] → logits [B, T, V] (or [B, 1, V] with `lastOnly`), plus the extended cache when one was given. */
  forward(ids: tf.Tensor2D | number[][], options: ForwardOptions = {}): ForwardResult {
    const tokens = Array.isArray(ids) ? tf.tensor2d(ids, undefined, 'int32') : ids;
    if (options.prefix) return this.forwardAfterPrefix(tokens, options.prefix, options);
    const T = tokens.shape[1];
    const past = options.cache?.length ?? 0;
    if (past + T > this.config.maxPositions && !options.positions) {
      throw new Error(`Sequence of ${past + T} tokens exceeds the model's maxPositions (${this.config.maxPositions}).`);
    }
    if (T === 1 && options.cache && this.decodesInOneKernel(options))
      return this.decodeStep(tokens, options.cache, options);
    const { x: hidden, cache } = this.blocks(tokens, options);
    return { logits: this.logitsOf(hidden, options), cache };
  }

  /** The blocks' output [B, T, C] → logits [B, T, V] (the last position's, [B, 1, V], with `lastOnly`). */
  private logitsOf(hidden: tf.Tensor3D, options: ForwardOptions): tf.Tensor3D {
    const [B, T, C] = hidden.shape;
    const x = options.lastOnly ? hidden.slice([0, T - 1, 0], [B, 1, C]) : hidden; // [B, T', C]
    const h = rmsNorm(x, this.norm as tf.Tensor1D, this.config.rmsNormEps); // [B, T', C]
    // Generation (lastOnly) reads a kept transposed copy of a tied embedding: transposing [V, C] per token
    // was most of a 135M model's step (V = 49,152). Training reads E through its strides as h · Eᵀ
    // (ops.ts mmT: no transposed copy, gradients flow) and drops the copy first: on wasm the heap it
    // frees is what a large model's backward pass needs.
    if (!options.lastOnly) this.dropTiedHead();
    const head = this.lmHead
      ? mm(h, this.lmHead)
      : options.lastOnly
        ? mm(h, this.tiedHeadForGeneration())
        : mmT(h, this.embedTokens);
    return head as tf.Tensor3D; // [B, T', V]
  }

  /** What every block of a pass over B × T positions after `past` reads: RoPE tables, the attention bias, LoRA and dropout settings. */
  private context(B: number, T: number, past: number, options: ForwardOptions): Context {
    return {
      ...this.rotary(B, T, past, options.positions),
      bias: attentionBias(B, T, past, options.keyValid),
      useLora: options.useLora ?? this.loraEnabled,
      dropoutSeed: options.dropoutSeed ?? null,
      differentiable: !options.lastOnly,
    };
  }

  /** ids [B, T] → their embeddings [B, T, C]. */
  private embedded(tokens: tf.Tensor2D): tf.Tensor3D {
    const [B, T] = tokens.shape;
    const flat = embed(this.embedTokens as tf.Tensor2D, tokens.reshape([B * T]) as tf.Tensor1D, this.embeddingTrains()); // [B·T, C]
    return flat.reshape([B, T, this.config.hiddenSize]) as tf.Tensor3D; // [B, T, C]
  }

  /** The blocks' output [B, T, C] for ids [B, T], and the extended cache when one was given. */
  private blocks(tokens: tf.Tensor2D, options: ForwardOptions): { x: tf.Tensor3D; cache: KVCache | null } {
    const [B, T] = tokens.shape;
    const past = options.cache?.length ?? 0;
    const ctx = this.context(B, T, past, options);
    let x = this.embedded(tokens);
    const newCache: KVCache | null = options.cache ? { k: [], v: [], length: past + T } : null;
    const recomputed = this.recomputedParams(options, B, T);
    for (let i = 0; i < this.layers.length; i++) {
      if (recomputed) {
        // Only the block's input is kept; the block runs again in the backward pass (recompute.ts).
        const block = (input: tf.Tensor3D, [cos, sin, bias]: (tf.Tensor | null)[]) =>
          this.block(i, input, { ...ctx, cos: cos!, sin: sin!, bias }, null, null);
        x = recomputedBlock(block, x, [ctx.cos, ctx.sin, ctx.bias], recomputed[i]);
        continue;
      }
      // Generation needs no gradient, so a layer's intermediates (attention scores are B·H·T·Tk floats)
      // are freed before the next layer runs; only its output and its cache entries survive the tidy.
      const run = () => this.block(i, x, ctx, options.cache ?? null, newCache);
      x = options.lastOnly
        ? (tf.tidy(() => [run(), ...(newCache ? [newCache.k[i], newCache.v[i]] : [])])[0] as tf.Tensor3D)
        : run();
    }
    return { x, cache: newCache };
  }

  /**
   * Rows [B, S] that continue shared prefixes: the prefixes run once through the blocks (their logits
   * are never needed), each row's keys and values are picked from its prefix's by a one-hot product (so
   * the prefix's gradient is the sum over its rows), and the rows run on that cache at positions after
   * their prefix's real length, masked from the prefix's padding.
   */
  private forwardAfterPrefix(tokens: tf.Tensor2D, prefix: SharedPrefixInput, options: ForwardOptions): ForwardResult {
    const [B, S] = tokens.shape;
    const [Np, P] = prefix.ids.shape;
    if (prefix.rowPrefix.length !== B || prefix.lengths.length !== Np || options.cache) {
      throw new Error(
        `forward: a shared prefix needs one prefix index per row (${B}) and one length per prefix (${Np}), and no cache`,
      );
    }
    const inner = { ...options, prefix: undefined };
    const select = new Float32Array(B * Np);
    prefix.rowPrefix.forEach((p, b) => (select[b * Np + p] = 1));
    const pick = tf.tensor2d(select, [B, Np]); // one-hot rows
    const last = this.config.maxPositions - 1;
    const lengthOf = (b: number) => prefix.lengths[prefix.rowPrefix[b]];
    // A padded row's tail may run past the window; its positions are clamped (its outputs are masked anyway).
    const positions = Array.from({ length: B }, (_, b) =>
      Array.from({ length: S }, (_, t) => Math.min(lengthOf(b) + t, last)),
    );
    const keyValid = Array.from({ length: B }, (_, b) =>
      Array.from({ length: P + S }, (_, j) => j >= P || j < lengthOf(b)),
    );
    const rows = { ...inner, positions, keyValid };
    // P + S bounds every row's length: the step 'auto' asks about is at most that long.
    const recomputed = this.recomputedParams(inner, B, P + S);
    if (recomputed) {
      const hidden = this.recomputedAfterPrefix(tokens, prefix.ids, pick, inner, rows, recomputed);
      return { logits: this.logitsOf(hidden, rows), cache: null };
    }
    const own = this.blocks(prefix.ids, { ...inner, cache: this.emptyCache() }).cache!; // per layer [Np, Hkv, P, D]
    const cache: KVCache = {
      k: own.k.map((t) => spreadRows(pick, t)),
      v: own.v.map((t) => spreadRows(pick, t)),
      length: P,
    };
    return this.forward(tokens, { ...rows, cache });
  }

  /**
   * forwardAfterPrefix's blocks with their activations recomputed in the backward pass. A layer's prefix
   * block and rows block are one recomputed op (recompute.ts), since the rows read the keys and values
   * the prefix block makes: so each gradient is summed where and in the order the plain pass sums it, and
   * a step with checkpointing gives bit for bit the gradients of one without. Kept per layer: the prefix's
   * and the rows' hidden states, Np·P + B·S positions (at most the B·T of the rows unshared).
   */
  private recomputedAfterPrefix(
    tokens: tf.Tensor2D,
    prefixIds: tf.Tensor2D,
    pick: tf.Tensor2D,
    inner: ForwardOptions,
    rows: ForwardOptions,
    params: tf.Variable[][],
  ): tf.Tensor3D {
    const [B, S] = tokens.shape;
    const [Np, P] = prefixIds.shape;
    const C = this.config.hiddenSize;
    // The plain pass's order: the prefix's embedding and context, then the rows'.
    let xp = this.embedded(prefixIds); // [Np, P, C]
    const prefixCtx = this.context(Np, P, 0, inner);
    let xr = this.embedded(tokens); // [B, S, C]
    const rowCtx = this.context(B, S, P, rows);
    const L = this.layers.length;
    for (let i = 0; i < L; i++) {
      const lastLayer = i === L - 1;
      const joint = ([p, r]: tf.Tensor[], [pCos, pSin, pBias, rCos, rSin, rBias, rowsOf]: (tf.Tensor | null)[]) => {
        const own: KVCache = { k: [], v: [], length: P };
        const pOut = this.block(
          i,
          p as tf.Tensor3D,
          { ...prefixCtx, cos: pCos!, sin: pSin!, bias: pBias },
          this.emptyCache(),
          own,
        );
        const cache: KVCache = { k: [], v: [], length: P };
        cache.k[i] = spreadRows(rowsOf as tf.Tensor2D, own.k[0]);
        cache.v[i] = spreadRows(rowsOf as tf.Tensor2D, own.v[0]);
        const rOut = this.block(i, r as tf.Tensor3D, { ...rowCtx, cos: rCos!, sin: rSin!, bias: rBias }, cache, null);
        // The last prefix block's output is read by nothing: left out, it is not differentiated (as in the plain pass).
        return lastLayer ? rOut : tf.concat([pOut.reshape([Np * P, C]), rOut.reshape([B * S, C])], 0);
      };
      const aux = [prefixCtx.cos, prefixCtx.sin, prefixCtx.bias, rowCtx.cos, rowCtx.sin, rowCtx.bias, pick];
      const out = recomputed(joint, [xp, xr], aux, params[i]);
      if (lastLayer) {
        xr = out as tf.Tensor3D;
        break;
      }
      // split's gradient keeps nothing of its input (slice's would keep it), so the joined output is freed here.
      const [p, r] = tf.split(out, [Np * P, B * S], 0);
      out.dispose();
      xp = p.reshape([Np, P, C]) as tf.Tensor3D;
      xr = r.reshape([B, S, C]) as tf.Tensor3D;
    }
    return xr;
  }

  /**
   * Per layer, the trainable variables a recomputed block differentiates; null when this forward pass
   * does not recompute: not under a gradient tape (generation, reference log-probs), with a cache, or
   * when the setting (or, for 'auto', the memory estimate of this B × T step) says no.
   */
  private recomputedParams(options: ForwardOptions, B: number, T: number): tf.Variable[][] | null {
    const taping = (tf.engine() as unknown as { state: { gradientDepth: number } }).state.gradientDepth > 0;
    if (!taping || options.lastOnly || options.cache || !(options.recompute ?? this.recomputes(B, T))) return null;
    const trainable = new Set<tf.Variable>(this.trainableVariables());
    return this.layers.map((layer) => layerVariables(layer).filter((v) => trainable.has(v)));
  }

  /**
   * Whether a training pass of B × T tokens recomputes its blocks under the model's setting; 'auto' asks
   * about the step as the update's fit check (train/update-fit.ts) counts it: this base's format, and on
   * wasm the decoding step's packed copies, which sit beside the weights once a run has generated.
   */
  recomputes(B: number, T: number): boolean {
    if (this.recompute !== 'auto') return this.recompute === 'on';
    return recomputeNeeded(this.config, {
      sequence: T,
      batch: B,
      quantization: this.quantized ? 'int8' : 'none',
      decodeCopies: hasFusedKernel(DECODE_STEP_KERNEL),
    });
  }

  /** An empty cache to start generation with. */
  emptyCache(): KVCache {
    return { k: [], v: [], length: 0 };
  }

  private rotary(B: number, T: number, past: number, positions?: number[][]): { cos: tf.Tensor; sin: tf.Tensor } {
    if (!positions) {
      return { cos: this.rope.cos.slice([past, 0], [T, -1]), sin: this.rope.sin.slice([past, 0], [T, -1]) }; // [T, D]
    }
    const all = positions.flat();
    this.checkPositions(all);
    const flat = tf.tensor1d(all, 'int32'); // [B·T]
    const D = this.config.headDim;
    const pick = (table: tf.Tensor2D) => tf.gather(table, flat).reshape([B, 1, T, D]); // [B, 1, T, D]
    return { cos: pick(this.rope.cos), sin: pick(this.rope.sin) };
  }

  /**
   * tfjs-wasm's gather does not check its indices: a position past the RoPE table reads (and, through
   * later kernels, corrupts) memory it does not own. Refuse it here, by name.
   */
  private checkPositions(positions: number[]): void {
    const bad = positions.find((p) => !(Number.isInteger(p) && p >= 0 && p < this.config.maxPositions));
    if (bad !== undefined)
      throw new Error(`position ${bad} is outside the model's ${this.config.maxPositions} positions (maxPositions)`);
  }

  // ── One decoding step as one kernel (kernels/decode-step.ts) ─────────────────────────────────────────

  /** Whether a generation step (one new position on a non-empty cache) runs as DECODE_STEP_KERNEL here. */
  private decodesInOneKernel(options: ForwardOptions): boolean {
    const linearsFloat = this.layers.every((layer) => TARGET_MODULES.every((m) => layer[m].weight));
    const { hiddenSize, intermediateSize, headDim } = this.config;
    const wholeVectors = [hiddenSize, intermediateSize, headDim / 2].every((n) => n % 4 === 0); // the step's kernels run on vectors of four
    return (
      Boolean(options.lastOnly) &&
      (options.cache?.length ?? 0) > 0 &&
      options.dropoutSeed === undefined &&
      linearsFloat &&
      wholeVectors &&
      hasFusedKernel(DECODE_STEP_KERNEL)
    );
  }

  private decodeStep(tokens: tf.Tensor2D, cache: KVCache, options: ForwardOptions): ForwardResult {
    const B = tokens.shape[0];
    const past = cache.length;
    const positions = options.positions?.map((row) => row[0]) ?? new Array<number>(B).fill(past);
    this.checkPositions(positions);
    const keyValid = options.keyValid && !options.keyValid.every((row) => row.every(Boolean)) ? options.keyValid : null;
    if (keyValid) checkKeyValid(keyValid, B, past + 1);
    const useLora = (options.useLora ?? this.loraEnabled) && this.lora !== null;
    const inputs: tf.NamedTensorMap = {
      ids: tokens,
      embed: this.embedTokens,
      ropeCos: this.rope.cos,
      ropeSin: this.rope.sin,
      norm: this.norm,
      head: this.lmHead ?? this.tiedHeadForGeneration(),
    };
    this.layers.forEach((layer, i) => {
      const add = (part: string, t: tf.Tensor | null | undefined) => {
        if (t) inputs[decodeInput(i, part)] = t;
      };
      add('inputNorm', layer.inputNorm);
      add('postNorm', layer.postNorm);
      add('qNorm', layer.qNorm);
      add('kNorm', layer.kNorm);
      add('cacheK', cache.k[i]);
      add('cacheV', cache.v[i]);
      for (const m of TARGET_MODULES) {
        const parts = partsOf(m);
        add(parts.weight, layer[m].weight);
        add(parts.bias, layer[m].bias);
        add(parts.loraA, useLora ? layer[m].lora?.A : null);
        add(parts.loraB, useLora ? layer[m].lora?.B : null);
      }
    });
    const { numLayers, numHeads, numKvHeads, headDim, rmsNormEps: eps } = this.config;
    const attrs: DecodeStepAttrs = {
      numLayers,
      numHeads,
      numKvHeads,
      headDim,
      eps,
      past,
      reserve: cache.reserve ?? 0,
      loraScale: this.lora ? this.lora.alpha / this.lora.r : 0,
      loraRank: this.lora?.r ?? 0,
      positions,
      keyValid,
    };
    const [logits, ...keysThenValues] = tf
      .engine()
      .runKernel(DECODE_STEP_KERNEL, inputs, attrs as unknown as tf.NamedAttrMap) as tf.Tensor[];
    const L = this.layers.length;
    return {
      logits: logits as tf.Tensor3D,
      cache: {
        k: keysThenValues.slice(0, L) as tf.Tensor4D[],
        v: keysThenValues.slice(L) as tf.Tensor4D[],
        length: past + 1,
      },
    };
  }

  /** The tied embedding transposed, kept until the embedding's data changes (an assign gives it a new dataId). */
  private tiedHeadForGeneration(): tf.Tensor {
    const current = this.embedTokens.dataId;
    if (!this.tiedHead || this.tiedHead.of !== current) {
      this.dropTiedHead();
      this.tiedHead = { of: current, tensor: tf.keep(this.embedTokens.transpose()) };
    }
    return this.tiedHead.tensor;
  }

  private dropTiedHead(): void {
    this.tiedHead?.tensor.dispose();
    this.tiedHead = null;
  }

  private embeddingTrains(): boolean {
    return this.lora === null && this.trainEmbeddings;
  }

  // ── Parameters ───────────────────────────────────────────────────────────────────────────────

  /**
   * Every base parameter with its HF name: a float32 variable, or a half-precision linear weight;
   * `transposed` marks [in, out] storage of an HF [out, in] weight.
   */
  namedParameters(): NamedParameter[] {
    const out: NamedParameter[] = [];
    out.push({ name: 'model.embed_tokens.weight', variable: this.embedTokens, transposed: false, layer: null });
    this.layers.forEach((layer, i) => {
      const p = `model.layers.${i}`;
      out.push({ name: `${p}.input_layernorm.weight`, variable: layer.inputNorm, transposed: false, layer: i });
      if (layer.qNorm)
        out.push({ name: `${p}.self_attn.q_norm.weight`, variable: layer.qNorm, transposed: false, layer: i });
      if (layer.kNorm)
        out.push({ name: `${p}.self_attn.k_norm.weight`, variable: layer.kNorm, transposed: false, layer: i });
      for (const m of TARGET_MODULES) {
        const l = layer[m];
        const name = `${l.name}.weight`;
        out.push(
          l.int8
            ? { name, variable: null, int8: l.int8, transposed: true, layer: i }
            : l.half
              ? { name, variable: null, half: l.half, transposed: true, layer: i }
              : { name, variable: l.weight!, transposed: true, layer: i },
        );
        if (l.bias) out.push({ name: `${l.name}.bias`, variable: l.bias, transposed: false, layer: i });
      }
      out.push({ name: `${p}.post_attention_layernorm.weight`, variable: layer.postNorm, transposed: false, layer: i });
    });
    out.push({ name: 'model.norm.weight', variable: this.norm, transposed: false, layer: null });
    if (this.lmHead) out.push({ name: 'lm_head.weight', variable: this.lmHead, transposed: true, layer: null });
    return out;
  }

  /**
   * Holds the seven projections of every layer in int8 (int8.ts) and frees their float32 weights: the
   * frozen base of a LoRA run with `model.quantization: int8`. Reads each weight synchronously, which is
   * safe on wasm and cpu; on WebGPU, where a synchronous read breaks later reads in Chromium, the base
   * must be quantized as it loads instead (fromWeights, loadHfModel's `quantization`). Idempotent; a
   * half-precision base is refused.
   */
  quantizeLinears(): void {
    assertInt8Backend();
    if (!this.quantized && tf.getBackend() === 'webgpu') {
      throw new Error(
        'On WebGPU an int8 base is quantized as it loads (loadHfModel with quantization: int8), not after: reading the float32 weights back synchronously breaks later reads there.',
      );
    }
    for (const layer of this.layers) {
      for (const m of TARGET_MODULES) {
        const l = layer[m];
        if (l.int8) continue;
        if (!l.weight)
          throw new Error(
            `${l.name} is held in half precision; int8 applies to a float32 base (load it with quantization int8).`,
          );
        const [inDim, outDim] = l.weight.shape as [number, number];
        l.int8 = int8Weight(l.weight.dataSync() as Float32Array, inDim, outDim);
        l.weight.dispose();
        l.weight = null;
      }
    }
  }

  /** Whether the projections are held in int8. */
  get quantized(): boolean {
    return this.layers.some((layer) => TARGET_MODULES.some((m) => layer[m].int8));
  }

  /** Turns the half-precision projections of `layers` into float32 variables (exact: every 16-bit value is a float32). */
  widenHalfLinears(layers: number[]): void {
    for (const i of layers) {
      for (const m of TARGET_MODULES) {
        const l = this.layers[i][m];
        if (!l.half) continue;
        const { packed, format } = l.half;
        l.weight = tf.tidy(() =>
          tf.variable(tf.engine().runKernel(HALF_WIDEN_KERNEL, { w: packed }, { format }) as tf.Tensor),
        );
        packed.dispose();
        l.half = null;
      }
    }
  }

  parameterCount(): number {
    return this.namedParameters().reduce((n, p) => n + tf.util.sizeFromShape(shapeOf(p)), 0);
  }

  /**
   * What an optimizer should update: the LoRA matrices when adapters are attached, otherwise every
   * base weight outside the frozen layers (embeddings and final norm too, unless `trainEmbeddings` is off).
   */
  trainableVariables(): tf.Variable[] {
    if (this.lora) {
      return this.layers.flatMap((layer, i) =>
        this.frozenLayers.has(i)
          ? []
          : TARGET_MODULES.flatMap((m) => (layer[m].lora ? [layer[m].lora!.A, layer[m].lora!.B] : [])),
      );
    }
    const trained = this.namedParameters().filter((p) =>
      p.layer === null ? this.trainEmbeddings || p.name === 'model.norm.weight' : !this.frozenLayers.has(p.layer),
    );
    const fixed = trained.find((p) => !p.variable);
    if (fixed?.int8)
      throw new Error(
        `Full fine-tuning needs float32 weights, and ${fixed.name} is held in int8 (model.quantization: int8): train with LoRA (lora.r > 0) or load the base with quantization none.`,
      );
    if (fixed)
      throw new Error(
        `Full fine-tuning needs float32 weights, and ${fixed.name} is held in half precision: widen it first (freezeLayers does, for full fine-tuning) or train with LoRA.`,
      );
    return trained.map((p) => p.variable!);
  }

  /**
   * Base weights in HF layout ([out, in] linears), by HF name. Async because synchronous reads
   * (dataSync) break later reads on tfjs-webgpu in Chromium.
   */
  async getWeights(): Promise<HostTensors> {
    const out: HostTensors = new Map();
    for (const p of this.namedParameters()) {
      if (p.int8) {
        const [inDim, outDim] = p.int8.shape;
        out.set(p.name, { shape: [outDim, inDim], data: transposeHost(await int8Values(p.int8), inDim, outDim) });
        continue;
      }
      if (!p.variable) {
        const [inDim, outDim] = p.half.shape;
        out.set(p.name, {
          shape: [outDim, inDim],
          data: transposeHost(fromHalfBits(await unpackHalf(p.half.packed), p.half.format), inDim, outDim),
        });
        continue;
      }
      const variable = p.variable;
      const t = p.transposed ? tf.tidy(() => variable.transpose()) : variable;
      out.set(p.name, { shape: t.shape.slice(), data: new Float32Array(await t.data()) });
      if (t !== variable) t.dispose();
    }
    return out;
  }

  /** Replaces base weights from an HF-layout map; every tensor must be present with its exact shape. */
  setWeights(weights: HostTensors, source = 'weights'): void {
    for (const p of this.namedParameters()) {
      const shape = shapeOf(p);
      const hfShape = p.transposed ? [...shape].reverse() : shape;
      const entry = weights.get(p.name);
      if (!entry) throw new Error(`${source}: tensor "${p.name}" is missing (expected shape [${hfShape.join(', ')}]).`);
      if (entry.shape.length !== hfShape.length || entry.shape.some((d, k) => d !== hfShape[k])) {
        throw new Error(
          `${source}: tensor "${p.name}" has shape [${entry.shape.join(', ')}], expected [${hfShape.join(', ')}].`,
        );
      }
      const variable = p.variable;
      if (p.int8) {
        // HF [out, in] → [in, out], quantized per output channel.
        const [inDim, outDim] = p.int8.shape;
        const next = int8Weight(transposeHost(entry.data, outDim, inDim), inDim, outDim);
        p.int8.packed.dispose();
        p.int8.scales.dispose();
        Object.assign(p.int8, next);
        continue;
      }
      if (!variable) {
        // HF [out, in] → [in, out], rounded to the 16-bit format (exact for a checkpoint saved in it).
        const [inDim, outDim] = p.half.shape;
        const bits = toHalfBits(transposeHost(entry.data, outDim, inDim), p.half.format);
        p.half.packed.dispose();
        p.half.packed = packHalf(bits, inDim, outDim);
        continue;
      }
      tf.tidy(() => {
        const t = tf.tensor(entry.data, entry.shape, 'float32');
        variable.assign(p.transposed ? t.transpose() : t);
      });
    }
  }

  dispose(): void {
    this.dropTiedHead();
    for (const p of this.namedParameters()) {
      if (p.int8) tf.dispose([p.int8.packed, p.int8.scales]);
      else (p.variable ?? p.half.packed).dispose();
    }
    for (const layer of this.layers) {
      for (const m of TARGET_MODULES) {
        layer[m].lora?.A.dispose();
        layer[m].lora?.B.dispose();
        layer[m].lora = null;
      }
    }
    this.rope.cos.dispose();
    this.rope.sin.dispose();
    this.rope.rotate.dispose();
  }
}

/** A parameter's shape as stored ([in, out] for linears). */
function shapeOf(p: NamedParameter): number[] {
  return p.variable ? p.variable.shape : p.half ? p.half.shape : p.int8!.shape;
}

/** int8 bases widen where SpindleInt8Widen is registered: wasm, cpu (int8.ts), WebGPU (kernels/webgpu/int8-widen.ts). */
function assertInt8Backend(): void {
  if (!hasFusedKernel(INT8_WIDEN_KERNEL)) {
    throw new Error(
      `model.quantization int8 runs on the wasm, WebGPU and cpu backends; the ${tf.getBackend()} backend has no int8 kernel: use quantization none there.`,
    );
  }
}

/** Every variable of a layer: norms, float projections and biases, adapters. */
function layerVariables(layer: LayerWeights): tf.Variable[] {
  const out: (tf.Variable | null)[] = [layer.inputNorm, layer.qNorm, layer.kNorm, layer.postNorm];
  for (const m of TARGET_MODULES)
    out.push(layer[m].weight, layer[m].bias, layer[m].lora?.A ?? null, layer[m].lora?.B ?? null);
  return out.filter((v): v is tf.Variable => v !== null);
}

/** A prefix's keys or values [Np, Hkv, P, D] for each of the rows that continue it: pick [B, Np] one-hot → [B, Hkv, P, D]. */
function spreadRows(pick: tf.Tensor2D, t: tf.Tensor4D): tf.Tensor4D {
  const Np = t.shape[0];
  return tf.matMul(pick, t.reshape([Np, -1])).reshape([pick.shape[0], ...t.shape.slice(1)]) as tf.Tensor4D; // [B, Hkv, P, D]
}

/**
 * Additive mask: 0 where query t may see key j (causal, and the key is not padding), −1e9 elsewhere;
 * null when it would be all zeros (a decoding step with no padded key).
 */
function attentionBias(B: number, T: number, past: number, keyValid?: boolean[][]): tf.Tensor | null {
  const Tk = past + T;
  if (T === 1 && (!keyValid || keyValid.every((row) => row.every(Boolean)))) return null;
  if (!keyValid) {
    const bias = new Float32Array(T * Tk);
    for (let t = 0; t < T; t++) for (let j = past + t + 1; j < Tk; j++) bias[t * Tk + j] = ATTENTION_MASKED;
    return tf.tensor2d(bias, [T, Tk]); // [T, Tk]
  }
  checkKeyValid(keyValid, B, Tk);
  const bias = new Float32Array(B * T * Tk);
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) {
      for (let j = 0; j < Tk; j++) if (j > past + t || !keyValid[b][j]) bias[(b * T + t) * Tk + j] = ATTENTION_MASKED;
    }
  }
  return tf.tensor(bias, [B, 1, 1, T, Tk]); // [B, 1, 1, T, Tk]
}

/** keyValid must give every row a flag per key, past and new. */
function checkKeyValid(keyValid: boolean[][], B: number, Tk: number): void {
  if (keyValid.length !== B || keyValid.some((row) => row.length !== Tk)) {
    throw new Error(`keyValid must be [${B}][${Tk}] (batch × past+new tokens).`);
  }
}

/** A row-major [rows, cols] array transposed to [cols, rows], on the host. */
function transposeHost(data: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(data.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = data[r * cols + c];
  return out;
}
