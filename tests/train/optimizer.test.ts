import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { Optimizer, type OptimizerConfig } from '../../src/train/optimizer.ts';
import { useWasm } from './helpers.ts';

beforeAll(useWasm);

const BASE: OptimizerConfig = { kind: 'adam', learningRate: 0.1, warmupSteps: 0, weightDecay: 0, gradClip: 0 };

function withVar(values: number[], cfg: OptimizerConfig) {
  const p = tf.tidy(() => tf.variable(tf.tensor1d(values)));
  const opt = new Optimizer([p], cfg);
  const grad = (g: number[]) => {
    const t = tf.tensor1d(g);
    opt.accumulate([t]);
    t.dispose();
  };
  const done = () => {
    opt.dispose();
    p.dispose();
  };
  return { p, opt, grad, done };
}

describe('optimizer', () => {
  it('Adam step 1 moves each weight by lr (bias-corrected m/√v = sign(g))', async () => {
    const { p, opt, grad, done } = withVar([1, 1], BASE);
    grad([2, -0.5]);
    const info = await opt.step();
    expect(Array.from(p.dataSync()).map((x) => +x.toFixed(6))).toEqual([0.9, 1.1]);
    expect(info.gradNorm).toBeCloseTo(Math.sqrt(4.25), 5);
    // step 2 with g = 2 again: m = 0.9·0.2+0.2 = 0.38 → m̂ = 0.38/0.19 = 2; v̂ = 2², update 1 → 0.8
    grad([2, -0.5]);
    await opt.step();
    expect(p.dataSync()[0]).toBeCloseTo(0.8, 5);
    done();
  });

  it('AdamW decays decoupled from the gradient; Adam adds wd·p to it', async () => {
    const w = withVar([1], { ...BASE, kind: 'adamw', weightDecay: 0.1 });
    w.grad([2]);
    await w.opt.step();
    expect(w.p.dataSync()[0]).toBeCloseTo(1 * (1 - 0.1 * 0.1) - 0.1, 6); // 0.89
    w.done();
    const a = withVar([1], { ...BASE, kind: 'adam', weightDecay: 0.1 });
    a.grad([2]);
    await a.opt.step();
    expect(a.p.dataSync()[0]).toBeCloseTo(0.9, 6);
    expect((await a.opt.exportState()).m[0][0]).toBeCloseTo(0.1 * 2.1, 6);
    a.done();
  });

  it('warms the learning rate up linearly', async () => {
    const { opt, p, grad, done } = withVar([0], { ...BASE, warmupSteps: 4 });
    expect([1, 2, 4, 9].map((t) => opt.learningRate(t))).toEqual([0.025, 0.05, 0.1, 0.1]);
    grad([1]);
    expect((await opt.step()).lr).toBe(0.025);
    expect(p.dataSync()[0]).toBeCloseTo(-0.025, 6);
    done();
  });

  it('clips by global norm and reports the norm before clipping', async () => {
    const { opt, grad, done } = withVar([0, 0], { ...BASE, gradClip: 1 });
    grad([3, 4]);
    expect((await opt.step()).gradNorm).toBeCloseTo(5, 5);
    const m = (await opt.exportState()).m[0];
    expect(m[0]).toBeCloseTo(0.1 * 0.6, 6);
    expect(m[1]).toBeCloseTo(0.1 * 0.8, 6);
    done();
  });

  it('accumulates micro-batch gradients into one update', async () => {
    const { opt, grad, done } = withVar([0], BASE);
    grad([1]);
    grad([2]);
    expect(opt.accumulated).toBe(2);
    expect((await opt.step()).gradNorm).toBeCloseTo(3, 6);
    expect(opt.accumulated).toBe(0);
    await expect(opt.step()).rejects.toThrow(/accumulate/);
    done();
  });

  it('a state round trip continues with identical updates, and nothing leaks', async () => {
    const before = tf.memory().numTensors;
    const a = withVar([0.5, -0.5], { ...BASE, kind: 'adamw', weightDecay: 0.01, warmupSteps: 2 });
    a.grad([0.3, -1]);
    await a.opt.step();
    a.grad([0.1, 0.2]); // pending at save time
    const state = structuredClone(await a.opt.exportState());
    const b = withVar(Array.from(a.p.dataSync()), { ...BASE, kind: 'adamw', weightDecay: 0.01, warmupSteps: 2 });
    b.opt.importState(state);
    for (const x of [a, b]) {
      await x.opt.step();
      x.grad([-0.7, 0.4]);
      await x.opt.step();
    }
    expect(Array.from(b.p.dataSync())).toEqual(Array.from(a.p.dataSync()));
    expect(b.opt.stepCount).toBe(3);
    a.done();
    b.done();
    expect(tf.memory().numTensors).toBe(before);
  });

  it('rejects a state for other variables', async () => {
    const { opt, done } = withVar([0], BASE);
    expect(() => opt.importState({ step: 1, m: [], v: [], pending: null, pendingCount: 0 })).toThrow(/LoRA\/freeze/);
    done();
  });
});
