import { describe, expect, it } from 'vitest';
import { WHOLE_NUMBER_INCREMENTS, wholeNumberLabels } from '../../src/ui/lib/axis-ticks.ts';
import { intervalBands, legendSeries, seriesColor, type SeriesSpec } from '../../src/ui/lib/chart-series.ts';
import { emaSmooth } from '../../src/ui/lib/smoothing.ts';
import { chartView, heldOutColumns } from '../../src/ui/screens/train/chart-views.ts';
import { CHARTS, chartSeries } from '../../src/ui/screens/train/charts.ts';
import { MetricTable } from '../../src/ui/screens/train/metric-table.ts';

const spec = (id: string) => CHARTS.find((c) => c.id === id)!;

describe('emaSmooth', () => {
  it('is debiased: a constant curve stays constant from its first point', () => {
    expect(emaSmooth([0.5, 0.5, 0.5], 0.9)).toEqual([0.5, 0.5, 0.5]);
  });

  it('averages with decaying weights and keeps gaps as gaps', () => {
    const out = emaSmooth([0, null, 1], 0.5);
    expect(out[0]).toBe(0);
    expect(out[1]).toBeNull();
    // (0.5·0.5·0 + 0.5·1) / (0.5·0.5 + 0.5) = 2/3
    expect(out[2]).toBeCloseTo(2 / 3, 12);
  });

  it('weight 0 is the raw curve', () => {
    expect(emaSmooth([0.1, 0.9], 0)).toEqual([0.1, 0.9]);
  });
});

describe('whole-number step ticks', () => {
  it('offers only whole-number increments, and labels without decimals', () => {
    expect(WHOLE_NUMBER_INCREMENTS.slice(0, 6)).toEqual([1, 2, 5, 10, 20, 50]);
    expect(WHOLE_NUMBER_INCREMENTS.every(Number.isInteger)).toBe(true);
    expect(wholeNumberLabels([1, 2, 3])).toEqual(['1', '2', '3']);
    expect(wholeNumberLabels([1.5])).toEqual(['']);
  });
});

describe('series styles', () => {
  const specs: SeriesSpec[] = [
    { label: 'a' },
    { label: 'b' },
    { label: 'a low', band: { of: 0, edge: 'low' } },
    { label: 'a high', band: { of: 0, edge: 'high' } },
    { label: 'a raw', colorOf: 0, faint: true },
  ];

  it('a band and a raw curve share their line colour; lines get their own', () => {
    expect(seriesColor(specs, 2)).toBe(seriesColor(specs, 0));
    expect(seriesColor(specs, 4)).toBe(seriesColor(specs, 0));
    expect(seriesColor(specs, 1)).not.toBe(seriesColor(specs, 0));
  });

  it('the legend leaves the band edges out, and the band spans high to low (1-based)', () => {
    expect(legendSeries(specs)).toEqual([0, 1, 4]);
    expect(intervalBands(specs).map((b) => b.series)).toEqual([[4, 3]]);
  });
});

describe('chart views', () => {
  const heldOut = [
    { step: 0, env: 'arith_tool', successes: 16, n: 32 },
    { step: 10, env: 'arith_tool', successes: 20, n: 32 },
  ];

  it('held-out success: the rate with its Wilson band, counts on hover', () => {
    const metrics = new MetricTable();
    metrics.add(0, { 'eval/arith_tool/success': 0.5 });
    const resolved = chartSeries(spec('eval'), metrics.keyList());
    const view = chartView(spec('eval'), resolved, { metrics, heldOut, smoothing: 0, klBeta: 0 });
    expect(view.series.map((s) => s.label)).toEqual(['arith_tool', 'arith_tool low', 'arith_tool high']);
    const [steps, rate, low, high] = view.columns();
    expect(steps).toEqual([0, 10]);
    expect(rate).toEqual([0.5, 0.625]);
    expect(Math.round(100 * low[0]!)).toBe(34);
    expect(Math.round(100 * high[0]!)).toBe(66);
    expect(view.describe!(0, 0)).toBe('16/32 = 50% [34, 66]');
    // Past the last evaluation the latest one is read out.
    expect(view.describe!(0, 12)).toBe('20/32 = 63% [45, 77]');
  });

  it('a compared run is drawn dashed, in the same colour, on the union of steps', () => {
    const metrics = new MetricTable();
    metrics.add(0, { 'eval/arith_tool/success': 0.5 });
    const compare = { name: 'base-run', heldOut: [{ step: 5, env: 'arith_tool', successes: 8, n: 32 }] };
    const resolved = chartSeries(spec('eval'), metrics.keyList());
    const view = chartView(spec('eval'), resolved, { metrics, heldOut, smoothing: 0, klBeta: 0, compare });
    expect(view.series[3]).toEqual({ label: 'arith_tool · base-run', colorOf: 0, dashed: true });
    const [steps, rate, , , other] = view.columns();
    expect(steps).toEqual([0, 5, 10]);
    expect(rate).toEqual([0.5, null, 0.625]);
    expect(other).toEqual([null, 0.25, null]);
    expect(view.describe!(3, 5)).toBe('8/32 = 25% [13, 42]');
  });

  it('the reward is smoothed with the raw curve kept, faint; smoothing 0 draws the raw one alone', () => {
    const metrics = new MetricTable();
    metrics.add(1, { reward: 0, reward_std: 0.1 });
    metrics.add(2, { reward: 1, reward_std: 0.1 });
    const resolved = chartSeries(spec('reward'), metrics.keyList());
    const smooth = chartView(spec('reward'), resolved, { metrics, heldOut: [], smoothing: 0.5, klBeta: 0 });
    expect(smooth.series.map((s) => s.label)).toEqual(['reward', 'reward_std', 'reward (raw)']);
    expect(smooth.series[2]).toMatchObject({ faint: true, colorOf: 0 });
    const [, reward, , raw] = smooth.columns();
    expect(raw).toEqual([0, 1]);
    expect(reward[1]).toBeCloseTo(2 / 3, 12);
    const off = chartView(spec('reward'), resolved, { metrics, heldOut: [], smoothing: 0, klBeta: 0 });
    expect(off.series.map((s) => s.label)).toEqual(['reward', 'reward_std']);
    expect(off.columns()[1]).toEqual([0, 1]);
  });

  it('the KL chart says KL is off when β is 0', () => {
    const metrics = new MetricTable();
    const off = chartView(spec('kl'), chartSeries(spec('kl'), []), { metrics, heldOut: [], smoothing: 0, klBeta: 0 });
    expect(off.hint).toMatch(/^KL off \(β = 0\)/);
    const on = chartView(spec('kl'), chartSeries(spec('kl'), []), { metrics, heldOut: [], smoothing: 0, klBeta: 0.04 });
    expect(on.hint).toBe(spec('kl').hint);
  });

  it('held-out columns skip results with n = 0', () => {
    expect(heldOutColumns(['x'], [{ step: 1, env: 'x', successes: 0, n: 0 }])).toEqual([[1], [null], [null], [null]]);
  });
});
