/**
 * One optimizer update from a list of samples: split into `accumSteps` micro-batches, forward +
 * backward each (`tf.variableGrads` over the optimizer's variables), accumulate, then clip and apply.
 * Shared by GRPO and SFT; tensor lifetimes are closed here (a test checks `tf.memory().numTensors`).
 */
import * as tf from '@tensorflow/tfjs';
import { tokenStats } from '../model/logprobs.ts';
import { scoringTemperature } from '../model/temperature.ts';
import { rowsWithinActivationBudget, rowsWithinScoreBudget } from '../model/memory.ts';
import { deriveSeed } from '../rng.ts';
import type { TransformerModel } from '../model/transformer.ts';
import { chunk, splitForMemory, trainedPart, type TrainSample } from './batch.ts';
import { packSharingPrefixes } from './shared-prefix.ts';
import { finishMetrics, grpoLoss, readSums, type GrpoLossConfig, type GrpoSums } from './grpo-loss.ts';
import type { Optimizer, StepInfo } from './optimizer.ts';
import { sftLoss } from './sft-loss.ts';
import { fitMicroBatches, updateFitFor } from './update-fit.ts';

export interface UpdateOptions {
  accumSteps: number;
  padId: number;
  /** Sampling temperature the log-probs are scaled by (GRPO); 1 for SFT. */
  temperature: number;
  /** Seeds LoRA dropout for this update. */
  dropoutSeed: number;
  /**
   * A promise while the run is paused, else null; awaited between micro-batches so a pause takes effect
   * within one micro-batch, not one whole update. Accumulated gradients wait in memory meanwhile.
   */
  held?: () => Promise<void> | null;
}

export interface UpdateResult {
  loss: number;
  step: StepInfo;
  /** GRPO only: clip_ratio/*, entropy, kl (when a reference is used). */
  metrics: Record<string, number>;
  tokens: number;
}

/** Attention-score floats one micro-batch may hold (32 MiB per tensor; see rowsWithinScoreBudget). */
const MICRO_BATCH_SCORE_FLOATS = 1 << 23;
/**
 * Activation bytes one micro-batch may keep (memory.ts activationBytes, as if no prompt were shared).
 * tfjs-wasm never gives heap back, and a page costs most the first time it is touched (2.7 s per GiB
 * on the 2-core VM): 32 rows of a spindle-base calc update (prompt 123, answers ≤ 96 tokens) grew the
 * heap to 1.5 GiB and took 6.9 s the first time and 0.80 s after; 16 rows at a time, 0.8 GiB, 3.0 s and 0.71 s.
 */
const MICRO_BATCH_ACTIVATION_BYTES = 1.5 * 1024 ** 3;
/** Below this many rows a split costs more in per-kernel overhead than it saves (8 rows at a time: 0.81 s in the case above). */
const MIN_ROWS_PER_MICRO_BATCH = 8;

/** Rows of `length` tokens one micro-batch holds: within the score budget, and within the activation budget down to MIN_ROWS_PER_MICRO_BATCH. */
function rowsPerMicroBatch(model: TransformerModel, length: number): number {
  const byActivations = Math.max(
    MIN_ROWS_PER_MICRO_BATCH,
    rowsWithinActivationBudget(model.config, length, MICRO_BATCH_ACTIVATION_BYTES),
  );
  return Math.min(rowsWithinScoreBudget(model.config.numHeads, length, MICRO_BATCH_SCORE_FLOATS), byActivations);
}

type LossKind = { kind: 'grpo'; cfg: GrpoLossConfig; useReference: boolean } | { kind: 'sft' };

function gradsInOrder(grads: tf.NamedTensorMap, vars: tf.Variable[]): tf.Tensor[] {
  return vars.map((v) => {
    const g = grads[v.name];
    if (!g) throw new Error(`update: no gradient for variable ${v.name}; is it used by the forward pass?`);
    return g;
  });
}

async function runUpdate(
  model: TransformerModel,
  opt: Optimizer,
  samples: TrainSample[],
  o: UpdateOptions,
  loss: LossKind,
): Promise<UpdateResult> {
  // Before any pass: rows cut to what a pass needs, then micro-batches split within the memory budgets and
  // until the estimate says each fits (update-fit.ts), or refused.
  const needed = samples.map((s) => trainedPart(s, model.config.maxPositions));
  const fitted = fitMicroBatches(
    splitForMemory(chunk(needed, o.accumSteps), (length) => rowsPerMicroBatch(model, length)),
    updateFitFor(model),
  );
  // Shared prompts run once (shared-prefix.ts), with gradient checkpointing too: the same packing either way.
  const chunks = fitted.map((c) => packSharingPrefixes(c, o.padId, model.config.maxPositions));
  const tokenCount = chunks.reduce((n, c) => n + c.tokenCount, 0);
  if (tokenCount === 0) throw new Error('update: the samples hold no assistant tokens to train on');
  const temperature = scoringTemperature(o.temperature);
  let lossSum = 0;
  let sums: GrpoSums | undefined;
  for (const [ci, c] of chunks.entries()) {
    if (ci > 0) await o.held?.();
    const W = c.T - 1;
    const mask = tf.tensor2d(c.mask, [c.B, W]); // [B, T-1]
    const ids = tf.tensor2d(c.ids, [c.B, c.T], 'int32'); // [B, T]
    const prefix = c.prefix
      ? { ids: tf.tensor2d(c.prefix.ids, undefined, 'int32'), lengths: c.prefix.lengths, rowPrefix: c.prefix.rowPrefix }
      : undefined;
    // GRPO's per-token inputs beside the forward pass: sampling log-probs, advantages, reference log-probs.
    let grpo: { oldLogp: tf.Tensor2D; advantages: tf.Tensor2D; refLogp?: tf.Tensor2D } | null = null;
    let sumsT: tf.Tensor | null = null;
    try {
      const f = (): tf.Scalar => {
        const stats = tokenStats(model, ids, {
          temperature,
          dropoutSeed: deriveSeed(o.dropoutSeed, ci),
          active: mask,
          prefix,
        });
        if (loss.kind === 'sft') return sftLoss(stats.logprobs, mask, tokenCount);
        const r = grpoLoss({ logp: stats.logprobs, entropy: stats.entropy, ...grpo!, mask, tokenCount }, loss.cfg);
        sumsT = tf.keep(r.sums);
        return r.loss;
      };
      if (loss.kind === 'grpo') {
        grpo = { oldLogp: tf.tensor2d(c.oldLogp, [c.B, W]), advantages: tf.tensor2d(c.advantages, [c.B, W]) };
        if (loss.useReference)
          grpo.refLogp = tf.tidy(
            () => tokenStats(model, ids, { temperature, useLora: false, active: mask, prefix }).logprobs,
          );
      }
      const { value, grads } = tf.variableGrads(f, opt.variables);
      lossSum += (await value.data())[0];
      opt.accumulate(gradsInOrder(grads, opt.variables));
      tf.dispose([value, ...Object.values(grads)]);
      if (sumsT) sums = readSums(await (sumsT as tf.Tensor).data(), sums);
    } finally {
      tf.dispose([mask, ids, ...(prefix ? [prefix.ids] : []), ...(grpo ? Object.values(grpo) : [])]);
      if (sumsT) (sumsT as tf.Tensor).dispose();
    }
  }
  const step = await opt.step();
  const metrics =
    loss.kind === 'grpo' && sums ? finishMetrics(sums, { hasRef: loss.useReference, hasEntropy: true }) : {};
  return { loss: lossSum, step, metrics, tokens: tokenCount };
}

export function grpoUpdate(
  model: TransformerModel,
  opt: Optimizer,
  samples: TrainSample[],
  o: UpdateOptions,
  cfg: GrpoLossConfig & { useReference: boolean },
): Promise<UpdateResult> {
  return runUpdate(model, opt, samples, o, { kind: 'grpo', cfg, useReference: cfg.useReference });
}

export function sftUpdate(
  model: TransformerModel,
  opt: Optimizer,
  samples: TrainSample[],
  o: UpdateOptions,
): Promise<UpdateResult> {
  return runUpdate(model, opt, samples, o, { kind: 'sft' });
}
