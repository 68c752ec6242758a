/**
 * How much memory loading and training a model takes, known from its config.json alone, so a model
 * that will not fit is refused before a byte of its weights is downloaded. The estimate is for the
 * peak while loading (the file's bytes, their float32 decode and the float32 tensors coexist for a
 * moment) or while training a LoRA update on one micro-batch, whichever is larger.
 *
 * The training coefficients are measured (`npx tsx bench/memory.bench.ts`: tfjs-wasm's heap growth
 * over one LoRA GRPO update, a fresh process per shape). Autodiff keeps about 35 floats per layer,
 * token and unit of hidden + intermediate width (every op's inputs and outputs that its gradient
 * reads, then the gradients), 9 per attention score, 6 copies of the logits, and 6 of the output head
 * (its transposes forward and back, in blocks the allocator does not reuse). The first estimate,
 * which counted only the tensors a layer computes, was 7–17× low.
 */
import { countParameters, type ModelConfig } from './config.ts';

export interface MemoryEstimate {
  parameters: number;
  /** Weights as tensors: float32, or the layers' projections in 16 bits with `halfLinears`. */
  weightBytes: number;
  /** Peak while loading: file + host decode + tensors. */
  loadPeakBytes: number;
  /** A LoRA GRPO/SFT step on `batch` × `sequence` tokens: weights, what autodiff keeps, logits, the head's copies (and, with `decodeCopies`, generation's). */
  trainPeakBytes: number;
  /** The packed copies of the projections and the output head that tfjs-wasm's decoding step keeps from the first token on (0 without `decodeCopies`). */
  decodeCopyBytes: number;
  /** The tokens of that step (batch × sequence). */
  trainTokens: number;
}

/**
 * The training step an import must fit: one 128-token sequence, the shortest useful episode. A model
 * that cannot train even that is refused before its weights download; one that can may still need
 * shorter sequences than a run asks for (what autodiff keeps grows with the sequence, its attention
 * scores with its square: SmolLM2-135M needs about 2.5 GiB at 128 tokens, 4.1 GiB at 256, on wasm).
 */
export const IMPORT_CHECK_TOKENS = 128;

/** Measured training coefficients (see the header). */
const FLOATS_PER_WIDTH = 35;
const FLOATS_PER_SCORE = 9;
const LOGIT_COPIES = 6;
const HEAD_COPIES = 6;

/** Weights in the seven projections of every layer (what `halfLinears` holds in 16 bits). */
function linearParameters(c: ModelConfig): number {
  const attention = c.hiddenSize * c.headDim * (2 * c.numHeads + 2 * c.numKvHeads);
  return c.numLayers * (attention + 3 * c.hiddenSize * c.intermediateSize);
}

/**
 * `fileBytesPerParam`: 2 for f16/bf16 checkpoints, 4 for f32; `halfLinears`: the projections kept in 16 bits (WebGPU);
 * `decodeCopies`: generation on tfjs-wasm, whose decoding step reads packed float32 copies of the projections and
 * the head (wasm-simd/packed-weights.ts), alive while the weights are, so a run's training peak comes on top of them.
 */
export function estimateMemory(config: ModelConfig, opts: { fileBytesPerParam?: number; sequence?: number; batch?: number; halfLinears?: boolean; decodeCopies?: boolean } = {}): MemoryEstimate {
  const parameters = countParameters(config);
  const weightBytes = parameters * 4 - (opts.halfLinears ? linearParameters(config) * 2 : 0);
  const fileBytes = parameters * (opts.fileBytesPerParam ?? 2);
  const tokens = (opts.sequence ?? 1024) * (opts.batch ?? 1);
  const { hiddenSize: C, intermediateSize: I, numHeads: H, numLayers: L, vocabSize: V } = config;
  const perLayer = tokens * (FLOATS_PER_WIDTH * (C + I) + FLOATS_PER_SCORE * H * (opts.sequence ?? 1024)) * 4;
  const logits = tokens * V * 4 * LOGIT_COPIES;
  const head = V * C * 4 * HEAD_COPIES;
  const decodeCopyBytes = opts.decodeCopies ? (linearParameters(config) + V * C) * 4 : 0;
  return { parameters, weightBytes, loadPeakBytes: fileBytes + 2 * weightBytes, trainPeakBytes: weightBytes + decodeCopyBytes + L * perLayer + logits + head, decodeCopyBytes, trainTokens: tokens };
}

export function formatBytes(n: number): string {
  if (n >= 1 << 30) return `${(n / (1 << 30)).toFixed(2)} GiB`;
  return n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(0)} MiB` : `${(n / 1024).toFixed(0)} KiB`;
}

/** Throws, naming the model, what it needs and what there is, when the estimate exceeds `availableBytes`. */
export function assertFits(estimate: MemoryEstimate, availableBytes: number, what: string): void {
  const need = Math.max(estimate.loadPeakBytes, estimate.trainPeakBytes);
  if (need <= availableBytes) return;
  throw new Error(
    `${what} has ${(estimate.parameters / 1e6).toFixed(0)}M parameters and needs about ${formatBytes(need)} to load and train ` +
      `on ${estimate.trainTokens} tokens (weights ${formatBytes(estimate.weightBytes)}), but ${formatBytes(availableBytes)} is available. Choose a smaller model ` +
      '(e.g. hf:HuggingFaceTB/SmolLM2-135M-Instruct) or close other tabs and programs.',
  );
}

/**
 * How many rows of `length` tokens one forward pass may hold so that its attention scores
 * (rows × heads × length² floats) stay within `scoreFloats`; at least one. Each layer keeps several
 * tensors of that size, and tfjs-wasm does not check its allocations: past its 4 GiB heap, memory is
 * corrupted and the run dies minutes later in an unrelated kernel (a prefill of 32 rows × 500 tokens
 * of spindle-base did). Generation's prefill and training's micro-batches are both bounded by this.
 */
export function rowsWithinScoreBudget(heads: number, length: number, scoreFloats: number): number {
  return Math.max(1, Math.floor(scoreFloats / (heads * length * length)));
}
