import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { finishMetrics, grpoLoss, readSums, type GrpoInputs, type GrpoLossConfig } from '../../src/train/grpo-loss.ts';
import { useWasm } from './helpers.ts';

beforeAll(useWasm);

const CFG: GrpoLossConfig = { clipEpsilon: 0.2, clipEpsilonHigh: null, klBeta: 0 };

/** Loss, d loss / d logp and metrics for one row of tokens. */
function run(logp: number[], oldLogp: number[], adv: number[], mask: number[], cfg = CFG, ref?: number[]) {
  const T = logp.length;
  const t = (xs: number[]) => tf.tensor2d(xs, [1, T]);
  const [lp, old, a, m] = [t(logp), t(oldLogp), t(adv), t(mask)];
  const r = ref ? t(ref) : undefined;
  const tokenCount = mask.reduce((x, y) => x + y, 0);
  let sums = readSums([0, 0, 0, 0, 0, 0]);
  const g = tf.grad((x: tf.Tensor) => {
    const out = grpoLoss(
      { logp: x as tf.Tensor2D, oldLogp: old, advantages: a, mask: m, refLogp: r, tokenCount } as GrpoInputs,
      cfg,
    );
    sums = readSums(out.sums.dataSync());
    return out.loss;
  });
  const grad = Array.from(g(lp).dataSync());
  const loss = grpoLoss(
    { logp: lp, oldLogp: old, advantages: a, mask: m, refLogp: r, tokenCount },
    cfg,
  ).loss.dataSync()[0];
  tf.dispose([lp, old, a, m, ...(r ? [r] : [])]);
  return { loss, grad, metrics: finishMetrics(sums, { hasRef: !!ref, hasEntropy: false }) };
}

describe('GRPO loss', () => {
  it('at ratio 1 is −mean(A) over assistant tokens, and ignores masked tokens', () => {
    // masked token has a huge log-prob gap: must not produce inf/NaN
    const r = run([-1, -2, -3, 5], [-1, -2, -3, -50], [1, -1, 2, 9], [1, 1, 1, 0]);
    expect(r.loss).toBeCloseTo(-(1 - 1 + 2) / 3, 6);
    // d/dlogp of −ratio·A/N at ratio 1 is −A/N
    expect(r.grad[0]).toBeCloseTo(-1 / 3, 6);
    expect(r.grad[1]).toBeCloseTo(1 / 3, 6);
    expect(Math.abs(r.grad[3])).toBe(0);
    expect(r.metrics['clip_ratio/region_mean']).toBe(0);
  });

  it('clips above 1+ε for positive advantages: value capped, gradient zero', () => {
    // ratio = e^0.4 ≈ 1.49 > 1.2, A = 1 → loss −1.2
    const r = run([0.4], [0], [1], [1]);
    expect(r.loss).toBeCloseTo(-1.2, 6);
    expect(Math.abs(r.grad[0])).toBe(0);
    expect(r.metrics['clip_ratio/high_mean']).toBe(1);
    expect(r.metrics['clip_ratio/low_mean']).toBe(0);
  });

  it('clips below 1−ε for negative advantages', () => {
    // ratio = e^-0.5 ≈ 0.607 < 0.8, A = −1 → −min(−0.607, −0.8) = 0.8
    const r = run([-0.5], [0], [-1], [1]);
    expect(r.loss).toBeCloseTo(0.8, 6);
    expect(Math.abs(r.grad[0])).toBe(0);
    expect(r.metrics['clip_ratio/low_mean']).toBe(1);
  });

  it('does not clip where clipping would not help (ratio high, A < 0): full gradient', () => {
    // ratio e^0.4, A = −1: −min(−1.49, −1.2) = 1.49, gradient = ratio·1
    const r = run([0.4], [0], [-1], [1]);
    expect(r.loss).toBeCloseTo(Math.exp(0.4), 5);
    expect(r.grad[0]).toBeCloseTo(Math.exp(0.4), 5);
    expect(r.metrics['clip_ratio/region_mean']).toBe(0);
  });

  it('clip_epsilon_high widens only the upper bound (DAPO clip-higher)', () => {
    const r = run([0.25], [0], [1], [1], { ...CFG, clipEpsilonHigh: 0.28 }); // ratio 1.284 > 1.28
    expect(r.loss).toBeCloseTo(-1.28, 6);
    const inside = run([0.2], [0], [1], [1], { ...CFG, clipEpsilonHigh: 0.28 }); // ratio 1.221 < 1.28
    expect(inside.loss).toBeCloseTo(-Math.exp(0.2), 5);
  });

  it('KL (k3) is 0 when policy = reference and exp(d)−d−1 otherwise', () => {
    const same = run([-1, -2], [-1, -2], [0, 0], [1, 1], { ...CFG, klBeta: 0.5 }, [-1, -2]);
    expect(same.metrics.kl).toBe(0);
    expect(same.loss).toBe(0);
    const d = 0.3; // ref − logp
    const diff = run([-1], [-1], [0], [1], { ...CFG, klBeta: 0.5 }, [-1 + d]);
    expect(diff.metrics.kl).toBeCloseTo(Math.exp(d) - d - 1, 6);
    expect(diff.loss).toBeCloseTo(0.5 * (Math.exp(d) - d - 1), 6);
  });

  it('says what is missing', () => {
    const z = tf.zeros([1, 1]) as tf.Tensor2D;
    expect(() => grpoLoss({ logp: z, oldLogp: z, advantages: z, mask: z, tokenCount: 0 }, CFG)).toThrow(/tokenCount/);
    expect(() =>
      grpoLoss({ logp: z, oldLogp: z, advantages: z, mask: z, tokenCount: 1 }, { ...CFG, klBeta: 0.1 }),
    ).toThrow(/reference/);
    z.dispose();
  });
});
