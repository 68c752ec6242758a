/**
 * How much memory loading and training a model takes, known from its config.json alone, so a model
 * that will not fit is refused before a byte of its weights is downloaded. The estimate is for the
 * peak while loading (the file's bytes, their float32 decode and the float32 tensors coexist for a
 * moment) or while training a LoRA update on one micro-batch, whichever is larger.
 *
 * The training coefficients are measured (`npx tsx bench/memory.bench.ts`: tfjs-wasm's heap growth
 * over one LoRA GRPO update, a fresh process per shape), fitted on seven shapes (micro
 * and three SmolLM2-135M layers, plain and recomputed). Autodiff keeps about 20 floats per layer,
 * token and unit of hidden + intermediate width (every op's inputs and outputs that its gradient
 * reads, then the gradients — tfjs frees no gradient before the backward pass ends), 9 per attention
 * score, and 7 copies of the logits (the logits, their gradient, and the log-softmax's temporaries of
 * logprobs.ts's fused op; autodiff through the composite ops would keep about 15). Counting only the
 * tensors a layer computes is 7–17× low. A tied output head costs no copies: training reads the
 * embedding through its strides (ops.ts mmT) instead of transposing it.
 *
 * A LoRA projection trains as one op (ops.ts loraLinear) and rows that share a prompt run it once
 * (train/shared-prefix.ts), so a LoRA update keeps less than these coefficients say: they stay as the bound
 * the fit check and the micro-batch split go by.
 *
 * Two ways down: recomputation (recompute.ts) keeps each block's input and the gradient at
 * each block boundary (FLOATS_PER_BLOCK_INPUT per layer, token and unit of hidden width) instead of
 * every layer's activations, and holds one layer's activations at a time in the backward pass; the
 * frozen base in int8 (int8.ts) holds the projections in one byte a weight plus a float32 scale per
 * output channel, widened to float32 one projection at a time (the largest projection, twice, transiently).
 */
import { countParameters, type ModelConfig } from './config.ts';

export interface MemoryEstimate {
  parameters: number;
  /** Weights as tensors: float32, or the layers' projections in 16 bits with `halfLinears`. */
  weightBytes: number;
  /** Peak while loading: file + host decode + tensors. */
  loadPeakBytes: number;
  /** A LoRA GRPO/SFT step on `batch` × `sequence` tokens: weights, what autodiff keeps, the logits' copies (and, with `decodeCopies`, generation's); with recomputation unless `recompute: false`. */
  trainPeakBytes: number;
  /** The packed copies of the projections and the output head that tfjs-wasm's decoding step keeps from the first token on (0 without `decodeCopies`). */
  decodeCopyBytes: number;
  /** The tokens of that step (batch × sequence). */
  trainTokens: number;
  /** Whether `trainPeakBytes` is the step with recomputation. */
  recompute: boolean;
  /** The same step without recomputation (equal to trainPeakBytes when `recompute` is false). */
  trainPeakPlainBytes: number;
}

/** The base's projections as the estimate counts them: float32 (or 16-bit, `halfLinears`), or int8 with per-channel scales. */
export type BaseQuantization = 'none' | 'int8';

export interface EstimateOptions {
  /** 2 for f16/bf16 checkpoints, 4 for f32. */
  fileBytesPerParam?: number;
  sequence?: number;
  batch?: number;
  /** The projections kept in 16 bits (WebGPU). */
  halfLinears?: boolean;
  /**
   * Generation on tfjs-wasm, whose decoding step reads packed float32 copies of the projections and the
   * head (kernels/wasm-simd/packed-weights.ts), alive while the weights are, so a run's training peak comes on top of them.
   */
  decodeCopies?: boolean;
  /** Recompute blocks in the backward pass; default true (what training does by itself when the plain step would not fit, memory.ts's recomputeNeeded). */
  recompute?: boolean;
  /** The frozen projections in int8 (the run config's model.quantization). */
  quantization?: BaseQuantization;
}

/**
 * The training step an import must fit: one 128-token sequence, the shortest useful episode. A model
 * that cannot train even that is refused before its weights download; one that can may still need
 * shorter sequences than a run asks for (what autodiff keeps grows with the sequence, its attention
 * scores with its square). With recomputation SmolLM2-135M needs about 1.4 GiB at 512 tokens on wasm
 * (5.9 GiB plain), and with the base in int8 a Qwen2.5-0.5B shape fits at 256 tokens (bench/memory.bench.ts).
 */
export const IMPORT_CHECK_TOKENS = 128;

/** Measured training coefficients (see the header). */
const FLOATS_PER_WIDTH = 20;
const FLOATS_PER_SCORE = 9;
const LOGIT_COPIES = 7;
/** With recomputation: each block's input, and the gradient at each block boundary (held to the end of the backward pass); fitted 7.8. */
const FLOATS_PER_BLOCK_INPUT = 8;

/**
 * Above this, a plain step is taken not to fit and 'auto' recomputes: three quarters of wasm's 4 GiB heap,
 * leaving room for the estimate's error (measured/estimated up to 1.05) and what else the engine holds.
 */
const AUTO_RECOMPUTE_ABOVE_BYTES = 3 * 1024 ** 3;

/** Weights in the seven projections of every layer (what `halfLinears` holds in 16 bits). */
function linearParameters(c: ModelConfig): number {
  const attention = c.hiddenSize * c.headDim * (2 * c.numHeads + 2 * c.numKvHeads);
  return c.numLayers * (attention + 3 * c.hiddenSize * c.intermediateSize);
}

/** The bytes of the base's weights as held: float32, 16-bit projections, or int8 projections with a float32 scale per output channel. */
function heldWeightBytes(config: ModelConfig, opts: EstimateOptions): number {
  const all = countParameters(config) * 4;
  const linear = linearParameters(config);
  if (opts.quantization === 'int8') return all - linear * 3 + linearOutputs(config) * 4;
  return all - (opts.halfLinears ? linear * 2 : 0);
}

/** Output channels of the seven projections over all layers (one int8 scale each). */
function linearOutputs(c: ModelConfig): number {
  return c.numLayers * (c.headDim * (2 * c.numHeads + 2 * c.numKvHeads) + 2 * c.intermediateSize + c.hiddenSize);
}

export function estimateMemory(config: ModelConfig, opts: EstimateOptions = {}): MemoryEstimate {
  const parameters = countParameters(config);
  const int8 = opts.quantization === 'int8';
  const weightBytes = heldWeightBytes(config, opts);
  const fileBytes = parameters * (opts.fileBytesPerParam ?? 2);
  const sequence = opts.sequence ?? 1024;
  const tokens = sequence * (opts.batch ?? 1);
  const { hiddenSize: C, intermediateSize: I, numLayers: L, vocabSize: V } = config;
  const perLayer = tokens * layerFloatsPerToken(config, sequence) * 4;
  const logits = tokens * V * 4 * LOGIT_COPIES;
  // int8 projections do not take the decoding kernel (it reads float32 weights), so only float ones have packed copies.
  const decodeCopyBytes = opts.decodeCopies && !int8 ? (linearParameters(config) + V * C) * 4 : 0;
  // int8: the projection being widened, and its transposed widening in the backward pass.
  const widened = int8 ? 2 * Math.max(C * I, C * config.headDim * config.numHeads) * 4 : 0;
  const held = weightBytes + decodeCopyBytes + widened;
  const plain = held + activationBytes(config, opts.batch ?? 1, sequence);
  const recomputed = held + logits + L * tokens * C * 4 * FLOATS_PER_BLOCK_INPUT + perLayer;
  const recompute = opts.recompute ?? true;
  // Loading: the file, its float32 decode on the host and the tensors (an int8 load quantizes a tensor at a time, hub/hf.ts).
  const loadPeakBytes = fileBytes + (int8 ? parameters * 4 + weightBytes : 2 * weightBytes);
  return {
    parameters,
    weightBytes,
    loadPeakBytes,
    trainPeakBytes: recompute ? recomputed : plain,
    trainPeakPlainBytes: plain,
    decodeCopyBytes,
    trainTokens: tokens,
    recompute,
  };
}

/** Whether a training step of `batch` × `sequence` tokens needs recomputation to fit (the 'auto' setting): its plain estimate exceeds AUTO_RECOMPUTE_ABOVE_BYTES. */
export function recomputeNeeded(config: ModelConfig, opts: EstimateOptions): boolean {
  return estimateMemory(config, { ...opts, recompute: false }).trainPeakBytes > AUTO_RECOMPUTE_ABOVE_BYTES;
}

export function formatBytes(n: number): string {
  if (n >= 1 << 30) return `${(n / (1 << 30)).toFixed(2)} GiB`;
  return n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(0)} MiB` : `${(n / 1024).toFixed(0)} KiB`;
}

/** What a model needs at its peak: loading it, or its training step. */
export function neededBytes(estimate: MemoryEstimate): number {
  return Math.max(estimate.loadPeakBytes, estimate.trainPeakBytes);
}

/**
 * Throws, naming the model, what it needs and what there is, when the estimate exceeds `availableBytes`;
 * `hint` (what would make it fit, e.g. the int8 base) goes before the generic advice.
 */
export function assertFits(estimate: MemoryEstimate, availableBytes: number, what: string, hint = ''): void {
  const need = neededBytes(estimate);
  if (need <= availableBytes) return;
  throw new Error(
    `${what} has ${(estimate.parameters / 1e6).toFixed(0)}M parameters and needs about ${formatBytes(need)} to load and train ` +
      `on ${estimate.trainTokens} tokens (weights ${formatBytes(estimate.weightBytes)}), but ${formatBytes(availableBytes)} is available. ${hint}Choose a smaller model ` +
      '(e.g. hf:HuggingFaceTB/SmolLM2-135M-Instruct) or close other tabs and programs.',
  );
}

/**
 * How many rows of `length` tokens one forward pass may hold so that its attention scores
 * (rows × heads × length × keys floats; keys = length unless a cache comes before) stay within
 * `scoreFloats`; at least one. Each layer keeps several
 * tensors of that size, and tfjs-wasm does not check its allocations: past its 4 GiB heap, memory is
 * corrupted and the run dies minutes later in an unrelated kernel (a prefill of 32 rows × 500 tokens
 * of spindle-base did). Generation's prefill and training's micro-batches are both bounded by this.
 */
export function rowsWithinScoreBudget(heads: number, length: number, scoreFloats: number, keys = length): number {
  return Math.max(1, Math.floor(scoreFloats / (heads * length * keys)));
}

/**
 * Bytes autodiff keeps for a plain (not recomputed) training pass over rows × length tokens: every
 * layer's activations and the logits' copies, by the coefficients above (no weights).
 */
export function activationBytes(config: ModelConfig, rows: number, length: number): number {
  return rows * length * (config.numLayers * layerFloatsPerToken(config, length) + LOGIT_COPIES * config.vocabSize) * 4;
}

/** Floats autodiff keeps per layer and token of a sequence of `length`: its activations and its attention scores. */
function layerFloatsPerToken(config: ModelConfig, length: number): number {
  return FLOATS_PER_WIDTH * (config.hiddenSize + config.intermediateSize) + FLOATS_PER_SCORE * config.numHeads * length;
}

/** How many rows of `length` tokens a training pass may hold within `budgetBytes` of activations (activationBytes); at least one. */
export function rowsWithinActivationBudget(config: ModelConfig, length: number, budgetBytes: number): number {
  return Math.max(1, Math.floor(budgetBytes / activationBytes(config, 1, length)));
}
