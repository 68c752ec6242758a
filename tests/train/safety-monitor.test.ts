import { describe, expect, it } from 'vitest';
import { detectRegressions, noiseMargin, SafetyMonitor, type BenchmarkScores } from '../../src/train/safety-monitor.ts';
import { DEFAULT_CONFIG } from '../../src/config/schema.ts';

// Many items: the noise margin is negligible, so these tests see the 5% relative-drop rule and the monitor's logic.
const CFG = { ...DEFAULT_CONFIG.safety, check_every: 10, eval_items: 1_000_000 };
const MANY = 1_000_000;

describe('regression detection (current < baseline × (1 − 0.05))', () => {
  it('flags a drop beyond 5% relative, not one within it', () => {
    const base = { a: 0.8, b: 0.5 };
    // a: 0.8·0.95 = 0.76 → 0.76 is not a regression, 0.759 is; b: 0.5·0.95 = 0.475
    expect(detectRegressions(base, { a: 0.76, b: 0.5 }, 0.05, MANY)).toEqual([]);
    const r = detectRegressions(base, { a: 0.759, b: 0.47 }, 0.05, MANY);
    expect(r.map((x) => x.benchmark)).toEqual(['a', 'b']);
    expect(r[0].drop).toBeCloseTo(0.041, 12);
  });

  it('does not call a drop within the evaluation noise a regression', () => {
    // 32 items each: 0.5 → 0.4 is 3 items, well inside noise (margin ≈ 0.24); 0.5 → 0.2 is not.
    expect(noiseMargin(0.45, 32)).toBeGreaterThan(0.2);
    expect(detectRegressions({ a: 0.5 }, { a: 0.4 }, 0.05, 32)).toEqual([]);
    expect(detectRegressions({ a: 0.5 }, { a: 0.2 }, 0.05, 32).map((r) => r.benchmark)).toEqual(['a']);
  });

  it('names a benchmark the evaluator forgot', () => {
    expect(() => detectRegressions({ a: 1 }, {}, 0.05, MANY)).toThrow(/"a"/);
  });
});

describe('safety monitor', () => {
  function monitor(seq: BenchmarkScores[], cfg = CFG) {
    let i = 0;
    return new SafetyMonitor(cfg, async () => seq[i++]);
  }

  it('sets baselines at step 0, then checks every N steps', async () => {
    const m = monitor([{ a: 0.8 }, { a: 0.85 }]);
    expect(m.due(0)).toBe(true);
    const r0 = await m.check(0);
    expect(r0).toMatchObject({ regressions: [], isBest: true, rollbackTo: null });
    expect(m.due(5)).toBe(false);
    expect(m.due(10)).toBe(true);
    const r1 = await m.check(10);
    expect(r1.isBest).toBe(true);
    expect(m.due(10)).toBe(false);
    expect(m.state().best).toEqual({ step: 10, mean: 0.85 });
  });

  it('a regression asks to roll back to the best checkpoint and raise the capability ratio', async () => {
    const m = monitor([
      { a: 0.8, b: 0.6 },
      { a: 0.9, b: 0.6 },
      { a: 0.95, b: 0.5 },
    ]);
    await m.check(0);
    await m.check(10); // best: step 10 (mean 0.75)
    const r = await m.check(20); // b fell 0.6 → 0.5 (< 0.57)
    expect(r.regressions).toEqual([{ benchmark: 'b', baseline: 0.6, current: 0.5, drop: 0.09999999999999998 }]);
    expect(r.rollbackTo).toBe(10);
    expect(r.capabilityRatio).toBe(0.5);
    const markers = SafetyMonitor.markers(r, 'run1', 123);
    expect(markers).toEqual([
      {
        kind: 'regression',
        run_id: 'run1',
        step: 20,
        benchmark: 'b',
        baseline: 0.6,
        current: 0.5,
        rolled_back_to: 10,
        time: 123,
      },
    ]);
  });

  it('with rollback off, only the data ratio changes; disabled never checks', async () => {
    const m = monitor([{ a: 1 }, { a: 0.5 }], { ...CFG, rollback: false });
    await m.check(0);
    const r = await m.check(10);
    expect(r.rollbackTo).toBeNull();
    expect(r.capabilityRatio).toBe(0.5);
    expect(monitor([], { ...CFG, enabled: false }).due(0)).toBe(false);
  });

  it('resumes from its state', async () => {
    const m = monitor([{ a: 0.8 }]);
    await m.check(0);
    const resumed = new SafetyMonitor(CFG, async () => ({ a: 0.7 }), m.state());
    expect(resumed.due(0)).toBe(false);
    expect((await resumed.check(10)).rollbackTo).toBe(0);
  });
});
