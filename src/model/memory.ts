/**
 * How much memory loading and training a model takes, known from its config.json alone, so a model
 * that will not fit is refused before a byte of its weights is downloaded. The estimate is for the
 * peak while loading (the file's bytes, their float32 decode and the float32 tensors coexist for a
 * moment) or while training a LoRA update on one sequence, whichever is larger.
 */
import { countParameters, type ModelConfig } from './config.ts';

export interface MemoryEstimate {
  parameters: number;
  /** Weights as tensors: float32, or the layers' projections in 16 bits with `halfLinears`. */
  weightBytes: number;
  /** Peak while loading: file + host decode + tensors. */
  loadPeakBytes: number;
  /** A LoRA GRPO/SFT step on `sequence` tokens: weights, activations kept for the backward pass, logits. */
  trainPeakBytes: number;
}

/** Weights in the seven projections of every layer (what `halfLinears` holds in 16 bits). */
function linearParameters(c: ModelConfig): number {
  const attention = c.hiddenSize * c.headDim * (2 * c.numHeads + 2 * c.numKvHeads);
  return c.numLayers * (attention + 3 * c.hiddenSize * c.intermediateSize);
}

/** `fileBytesPerParam`: 2 for f16/bf16 checkpoints, 4 for f32; `halfLinears`: the projections kept in 16 bits (WebGPU). */
export function estimateMemory(config: ModelConfig, opts: { fileBytesPerParam?: number; sequence?: number; batch?: number; halfLinears?: boolean } = {}): MemoryEstimate {
  const parameters = countParameters(config);
  const weightBytes = parameters * 4 - (opts.halfLinears ? linearParameters(config) * 2 : 0);
  const fileBytes = parameters * (opts.fileBytesPerParam ?? 2);
  const tokens = (opts.sequence ?? 1024) * (opts.batch ?? 1);
  const { hiddenSize: C, intermediateSize: I, numHeads: H, numLayers: L, vocabSize: V } = config;
  // Per layer and token: the residual, norms, q/k/v/o, the MLP's three I-wide tensors, and the attention
  // probabilities (H × sequence); all float32, kept for the backward pass.
  const perLayer = tokens * (8 * C + 3 * I + H * (opts.sequence ?? 1024)) * 4;
  const logits = tokens * V * 4 * 3; // logits, log-softmax and their gradient
  return { parameters, weightBytes, loadPeakBytes: fileBytes + 2 * weightBytes, trainPeakBytes: weightBytes + L * perLayer + logits };
}

export function formatBytes(n: number): string {
  return n >= 1 << 30 ? `${(n / (1 << 30)).toFixed(2)} GiB` : `${(n / (1 << 20)).toFixed(0)} MiB`;
}

/** Throws, naming the model, what it needs and what there is, when the estimate exceeds `availableBytes`. */
export function assertFits(estimate: MemoryEstimate, availableBytes: number, what: string): void {
  const need = Math.max(estimate.loadPeakBytes, estimate.trainPeakBytes);
  if (need <= availableBytes) return;
  throw new Error(
    `${what} has ${(estimate.parameters / 1e6).toFixed(0)}M parameters and needs about ${formatBytes(need)} to load and train ` +
      `(weights ${formatBytes(estimate.weightBytes)}), but ${formatBytes(availableBytes)} is available. Choose a smaller model ` +
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
