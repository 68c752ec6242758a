/**
 * An update never starts a micro-batch the memory estimate says will not fit. tfjs-wasm does
 * not check its allocations: past its 4 GiB heap memory is corrupted, and a run dies minutes later with
 * `memory access out of bounds` in an unrelated kernel (a SmolLM2-135M-shaped update at ~252 tokens did).
 * So before the passes, each micro-batch's peak (model/memory.ts's calibrated estimate, with the model's
 * own recomputation and int8 settings, and the decoding step's packed copies that stay beside the weights
 * once a run has generated) is checked against the heap: micro-batches that do not fit are split to one
 * sequence each, and a sequence that does not fit alone is refused, naming the longest that would.
 * Other backends have no fixed heap (WebGPU's limits are the device's), so nothing is checked there.
 */
import * as tf from '@tensorflow/tfjs';
import { estimateMemory, formatBytes, recomputeNeeded } from '../model/memory.ts';
import type { TransformerModel } from '../model/transformer.ts';

/** tfjs-wasm's heap: 4 GiB of 32-bit addresses, less what the module reserves. */
export const WASM_HEAP_BYTES = 4 * 1024 ** 3 - 64 * 1024;

export interface UpdateFit {
  limitBytes: number;
  /** The estimated peak of a micro-batch of `rows` sequences of `length` tokens. */
  peakBytes(rows: number, length: number): number;
}

/** The fit check for `model` on the active backend; null where there is no fixed heap to check against. */
export function updateFitFor(model: TransformerModel): UpdateFit | null {
  if (tf.getBackend() !== 'wasm') return null;
  const int8 = model.layers.some((layer) => layer.q_proj.int8);
  const quantization = int8 ? ('int8' as const) : ('none' as const);
  return {
    limitBytes: WASM_HEAP_BYTES,
    peakBytes(rows, length) {
      const shape = { sequence: length, batch: rows, quantization, decodeCopies: true };
      const recompute =
        model.recompute === 'on' || (model.recompute === 'auto' && recomputeNeeded(model.config, shape));
      return estimateMemory(model.config, { ...shape, recompute }).trainPeakBytes;
    },
  };
}

/** Thrown before an update that cannot fit: nothing was computed, nothing is lost. */
export class UpdateTooLarge extends Error {
  constructor(
    readonly length: number,
    readonly fitsLength: number,
    needBytes: number,
    limitBytes: number,
  ) {
    super(
      `This update would need about ${formatBytes(needBytes)} for one sequence of ${length} tokens, above the ${formatBytes(limitBytes)} ` +
        `the wasm backend can hold; at most ${fitsLength} tokens per sequence fit. Shorten episodes (sampling.max_new_tokens, ` +
        'trajectory_collection.max_steps_per_trajectory), set model.quantization: int8 or training.gradient_checkpointing: on, ' +
        'or train on WebGPU.',
    );
    this.name = 'UpdateTooLarge';
  }
}

/**
 * Micro-batches that fit: any whose estimate exceeds the heap is split into single sequences (the loss is
 * normalised over the whole update, so the split changes time, not the gradient); throws UpdateTooLarge
 * when one sequence alone does not fit.
 */
export function fitMicroBatches<T extends { tokens: readonly number[] }>(batches: T[][], fit: UpdateFit | null): T[][] {
  if (!fit) return batches;
  return batches.flatMap((batch) => {
    const length = Math.max(...batch.map((s) => s.tokens.length));
    if (fit.peakBytes(batch.length, length) <= fit.limitBytes) return [batch];
    for (const s of batch) {
      const need = fit.peakBytes(1, s.tokens.length);
      if (need > fit.limitBytes)
        throw new UpdateTooLarge(s.tokens.length, longestFitting(fit, s.tokens.length), need, fit.limitBytes);
    }
    return batch.map((s) => [s]);
  });
}

/** The longest sequence below `length` whose single-sequence step fits (0 if none). */
function longestFitting(fit: UpdateFit, length: number): number {
  let [lo, hi] = [0, length];
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fit.peakBytes(1, mid) <= fit.limitBytes) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
