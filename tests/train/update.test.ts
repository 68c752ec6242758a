import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { sequenceLogprobs } from '../model/helpers.ts';
import type { TrainSample } from '../../src/train/batch.ts';
import { readFileSync } from 'node:fs';
import { fromHfConfig } from '../../src/model/config.ts';
import {
  activationBytes,
  estimateMemory,
  rowsWithinActivationBudget,
  rowsWithinScoreBudget,
} from '../../src/model/memory.ts';
import { packBatch, splitForMemory, trainedPart } from '../../src/train/batch.ts';
import { Optimizer } from '../../src/train/optimizer.ts';
import { grpoUpdate, sftUpdate } from '../../src/train/update.ts';
import { tinyModel, useWasm } from './helpers.ts';

beforeAll(useWasm);

const PROMPT = [1, 2, 3];
const GOOD = [4, 5, 6, 7];
const BAD = [8, 9, 10, 11];
const GRPO = { clipEpsilon: 0.2, clipEpsilonHigh: null, klBeta: 0, useReference: false };
const OPTS = { accumSteps: 1, padId: 0, temperature: 1, dropoutSeed: 1 };

function sample(completion: number[], adv: number, oldLogp: number[]): TrainSample {
  const tokens = [...PROMPT, ...completion];
  const mask = tokens.map((_, i) => (i >= PROMPT.length ? 1 : 0));
  return { tokens, mask, oldLogp: [0, ...oldLogp], advantages: mask.map((m) => m * adv) };
}

async function completionLogp(model: ReturnType<typeof tinyModel>, completion: number[]): Promise<number> {
  const [lp] = await sequenceLogprobs(model, [[...PROMPT, ...completion]]);
  return lp.slice(PROMPT.length - 1).reduce((a, b) => a + b, 0);
}

async function fixedBatch(model: ReturnType<typeof tinyModel>): Promise<TrainSample[]> {
  const [g, b] = await sequenceLogprobs(model, [
    [...PROMPT, ...GOOD],
    [...PROMPT, ...BAD],
  ]);
  return [sample(GOOD, 1, g), sample(BAD, -1, b)];
}

describe('packBatch', () => {
  it('shifts per-token arrays by one and pads with mask 0', () => {
    const p = packBatch(
      [
        { tokens: [1, 2, 3], mask: [0, 1, 1], oldLogp: [0, -1, -2], advantages: [0, 3, 3] },
        { tokens: [4, 5], mask: [0, 1] },
      ],
      0,
      64,
    );
    expect(p.T).toBe(3);
    expect(p.ids).toEqual([
      [1, 2, 3],
      [4, 5, 0],
    ]);
    expect(Array.from(p.mask)).toEqual([1, 1, 1, 0]);
    expect(Array.from(p.oldLogp)).toEqual([-1, -2, 0, 0]);
    expect(Array.from(p.advantages)).toEqual([3, 3, 0, 0]);
    expect(p.tokenCount).toBe(3);
    // Past the model's window the tail is cut (no gradient there) instead of failing the update.
    const long = packBatch([{ tokens: Array.from({ length: 70 }, (_, i) => i), mask: new Array(70).fill(1) }], 0, 64);
    expect(long.T).toBe(64);
    expect(long.ids[0]).toEqual(Array.from({ length: 64 }, (_, i) => i));
    expect(long.tokenCount).toBe(63);
  });

  it("leaves out what follows a row's last trained token (a tool reply after the last turn): it changes no trained position", () => {
    const p = packBatch(
      [
        {
          tokens: [1, 2, 3, 4, 5, 6],
          mask: [0, 1, 1, 0, 0, 0],
          oldLogp: [0, -1, -2, 0, 0, 0],
          advantages: [0, 1, 1, 0, 0, 0],
        },
        { tokens: [7, 8], mask: [0, 1] },
      ],
      0,
      64,
    );
    expect(p.T).toBe(3);
    expect(p.ids).toEqual([
      [1, 2, 3],
      [7, 8, 0],
    ]);
    expect(Array.from(p.oldLogp)).toEqual([-1, -2, 0, 0]);
    expect(trainedPart({ tokens: [1, 2, 3], mask: [0, 1, 1] }, 64).tokens).toEqual([1, 2, 3]);
    expect(trainedPart({ tokens: [1, 2, 3], mask: [0, 0, 0] }, 64).tokens).toEqual([1]);
  });
});

describe('splitForMemory', () => {
  const seq = (length: number) => ({ tokens: Array.from({ length }, (_, i) => i) });
  it('splits a micro-batch until rows × heads × T² fits, and leaves small ones alone', () => {
    const long = Array.from({ length: 6 }, (_, i) => seq(90 + i));
    const short = [seq(10), seq(12)];
    const byScores = (length: number) => rowsWithinScoreBudget(4, length, 80_000); // T = 95: 4 heads × 95² = 36,100 floats per row
    const split = splitForMemory([long, short], byScores); // 2 rows of the long ones fit
    expect(split.map((b) => b.length)).toEqual([2, 2, 2, 2]);
    expect(split.flat()).toEqual([...long, ...short]);
    expect(splitForMemory([[seq(500)]], () => 0)).toEqual([[seq(500)]]); // one row is the floor
  });

  it('keeps a micro-batch of the shipped base within the activation budget memory.ts estimates', () => {
    const base = fromHfConfig(JSON.parse(readFileSync('models/spindle-base/config.json', 'utf8')));
    const budget = 1.5 * 1024 ** 3;
    // A calc update's 32 rows of 220 tokens: over the budget, so it is halved until each micro-batch fits
    // (two of 16 on the byte-level base, which fits 19 rows; four of 8 on a base that fits 10).
    expect(activationBytes(base, 32, 220)).toBeGreaterThan(budget);
    const fit = rowsWithinActivationBudget(base, 220, budget);
    expect(fit).toBeGreaterThan(1);
    expect(activationBytes(base, fit, 220)).toBeLessThanOrEqual(budget);
    expect(activationBytes(base, fit + 1, 220)).toBeGreaterThan(budget);
    let parts = 1;
    while (32 / parts > fit) parts *= 2;
    expect(
      splitForMemory([Array.from({ length: 32 }, () => seq(220))], (n) =>
        rowsWithinActivationBudget(base, n, budget),
      ).map((b) => b.length),
    ).toEqual(Array(parts).fill(32 / parts));
    // The plain training estimate is the held weights plus these activations.
    const estimate = estimateMemory(base, { batch: 4, sequence: 100, recompute: false });
    expect(estimate.trainPeakBytes).toBe(estimate.weightBytes + activationBytes(base, 4, 100));
  });
});

describe('GRPO update on a fixed batch', () => {
  it('raises the log-prob of the positive-advantage completion and lowers the negative one', async () => {
    const model = tinyModel();
    const opt = new Optimizer(model.trainableVariables(), {
      kind: 'adamw',
      learningRate: 1e-2,
      warmupSteps: 0,
      weightDecay: 0,
      gradClip: 1,
    });
    const [good0, bad0] = [await completionLogp(model, GOOD), await completionLogp(model, BAD)];
    const batch = await fixedBatch(model);
    for (let i = 0; i < 3; i++) await grpoUpdate(model, opt, batch, OPTS, GRPO);
    const [good1, bad1] = [await completionLogp(model, GOOD), await completionLogp(model, BAD)];
    expect(good1).toBeGreaterThan(good0 + 0.01);
    expect(bad1).toBeLessThan(bad0 - 0.01);
    opt.dispose();
    model.dispose();
  });

  it('on-policy: no clipping, KL 0 while LoRA is fresh (policy = reference), finite loss, and no tensor leak', async () => {
    const model = tinyModel();
    const opt = new Optimizer(model.trainableVariables(), {
      kind: 'adam',
      learningRate: 1e-3,
      warmupSteps: 0,
      weightDecay: 0,
      gradClip: 1,
    });
    const batch = await fixedBatch(model);
    const cfg = { ...GRPO, klBeta: 0.1, useReference: true };
    const first = await grpoUpdate(model, opt, batch, OPTS, cfg);
    expect(first.metrics.kl).toBeCloseTo(0, 6);
    expect(first.metrics['clip_ratio/region_mean']).toBe(0);
    expect(first.metrics.entropy).toBeGreaterThan(0);
    expect(Number.isFinite(first.loss)).toBe(true);
    const before = tf.memory().numTensors;
    const second = await grpoUpdate(model, opt, batch, OPTS, cfg);
    expect(tf.memory().numTensors).toBe(before);
    expect(second.metrics.kl).toBeGreaterThan(0); // the adapters moved away from the reference
    opt.dispose();
    model.dispose();
  });

  it('clipping engages when the sampling log-probs are far from the policy', async () => {
    const model = tinyModel();
    const opt = new Optimizer(model.trainableVariables(), {
      kind: 'adam',
      learningRate: 1e-3,
      warmupSteps: 0,
      weightDecay: 0,
      gradClip: 1,
    });
    // old log-probs 1 nat below the policy: ratio e ≈ 2.7 > 1.2 on every token of the positive sample
    const batch = (await fixedBatch(model)).map((s, i) =>
      i === 0 ? { ...s, oldLogp: Array.from(s.oldLogp!, (x, t) => (t > 0 ? x - 1 : x)) } : s,
    );
    const r = await grpoUpdate(model, opt, batch, OPTS, GRPO);
    expect(r.metrics['clip_ratio/high_mean']).toBeCloseTo(0.5, 6); // 4 of 8 assistant tokens
    expect(r.metrics['clip_ratio/low_mean']).toBe(0);
    opt.dispose();
    model.dispose();
  });

  it('accumulating two micro-batches gives the same update as one batch', async () => {
    const run = async (accumSteps: number) => {
      const model = tinyModel();
      const opt = new Optimizer(model.trainableVariables(), {
        kind: 'adam',
        learningRate: 1e-2,
        warmupSteps: 0,
        weightDecay: 0,
        gradClip: 0,
      });
      const r = await grpoUpdate(model, opt, await fixedBatch(model), { ...OPTS, accumSteps }, GRPO);
      const w = Array.from(model.trainableVariables()[1].dataSync());
      opt.dispose();
      model.dispose();
      return { r, w };
    };
    const [one, two] = [await run(1), await run(2)];
    expect(two.r.loss).toBeCloseTo(one.r.loss, 5);
    expect(two.r.step.gradNorm).toBeCloseTo(one.r.step.gradNorm, 4);
    two.w.forEach((x, i) => expect(x).toBeCloseTo(one.w[i], 5));
  });

  it('waits between micro-batches while held (a pause), and applies the same update once released', async () => {
    const model = tinyModel();
    const opt = new Optimizer(model.trainableVariables(), {
      kind: 'adam',
      learningRate: 1e-2,
      warmupSteps: 0,
      weightDecay: 0,
      gradClip: 0,
    });
    let release!: () => void;
    let hold: Promise<void> | null = new Promise<void>((resolve) => (release = resolve));
    let asked = 0;
    let firstAsk!: () => void;
    const askedOnce = new Promise<void>((resolve) => (firstAsk = resolve));
    const before = Array.from(model.trainableVariables()[1].dataSync());
    const update = grpoUpdate(
      model,
      opt,
      await fixedBatch(model),
      { ...OPTS, accumSteps: 2, held: () => (asked++, firstAsk(), hold) },
      GRPO,
    );
    let done = false;
    void update.then(() => (done = true));
    await askedOnce;
    // An update that went on past the hold would have run its second micro-batch by the next loop turn.
    await new Promise((resolve) => setImmediate(resolve));
    // One micro-batch ran, then the update stopped at the hold: nothing applied yet.
    expect(asked).toBe(1);
    expect(done).toBe(false);
    expect(Array.from(model.trainableVariables()[1].dataSync())).toEqual(before);
    hold = null;
    release();
    await update;
    expect(Array.from(model.trainableVariables()[1].dataSync())).not.toEqual(before);
    opt.dispose();
    model.dispose();
  });
});

describe('SFT update', () => {
  it('lowers the assistant-only cross-entropy', async () => {
    const model = tinyModel();
    const opt = new Optimizer(model.trainableVariables(), {
      kind: 'adamw',
      learningRate: 2e-2,
      warmupSteps: 0,
      weightDecay: 0,
      gradClip: 1,
    });
    const ex: TrainSample = { tokens: [...PROMPT, ...GOOD], mask: [0, 0, 0, 1, 1, 1, 1] };
    const losses: number[] = [];
    for (let i = 0; i < 5; i++) losses.push((await sftUpdate(model, opt, [ex], OPTS)).loss);
    expect(losses[4]).toBeLessThan(losses[0] - 0.05);
    // initial loss of an untrained model is about ln(16) per token
    expect(losses[0]).toBeGreaterThan(2);
    opt.dispose();
    model.dispose();
  });
});
