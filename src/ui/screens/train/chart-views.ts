/**
 * What each Train chart draws beyond its raw metric columns: the reward curve smoothed (an EMA, with the
 * raw curve kept faint beneath it), held-out success as counts with a Wilson 95% band (and a second run's
 * results dashed beside them), and the KL chart saying that KL is off when β is 0 rather than staying empty.
 */
import { formatSuccessCount, wilsonInterval } from '../../../rollout/success-interval.ts';
import type { SeriesSpec } from '../../lib/chart-series.ts';
import { emaSmooth } from '../../lib/smoothing.ts';
import type { ChartSpec, ResolvedSeries } from './charts.ts';
import type { AlignedColumns, MetricTable } from './metric-table.ts';
import type { ComparedRun, HeldOutResult } from './held-out.ts';

/** The metric whose curve is smoothed (the batch's mean reward: the noisiest line a reader follows). */
export const SMOOTHED_KEY = 'reward';

export interface ChartView {
  series: SeriesSpec[];
  columns: () => AlignedColumns;
  hint: string;
  describe?: (series: number, step: number) => string | null;
}

export interface ChartInputs {
  metrics: MetricTable;
  heldOut: readonly HeldOutResult[];
  /** EMA weight in [0, 1); 0 draws the raw curve alone. */
  smoothing: number;
  /** The KL coefficient of the run shown (or of the config about to run). */
  klBeta: number;
  compare?: ComparedRun | null;
}

export function chartView(spec: ChartSpec, resolved: ResolvedSeries[], inputs: ChartInputs): ChartView {
  if (spec.id === 'eval') return heldOutView(spec, resolved, inputs);
  const keys = resolved.map((s) => s.key);
  const series: SeriesSpec[] = resolved.map((s) => ({ label: s.label }));
  const hint = spec.id === 'kl' && inputs.klBeta === 0 ? 'KL off (β = 0): no KL term, nothing to measure' : spec.hint;
  const smoothed = keys.indexOf(SMOOTHED_KEY);
  if (smoothed < 0 || inputs.smoothing <= 0) return { series, hint, columns: () => inputs.metrics.columns(keys) };
  return {
    series: [...series, { label: `${resolved[smoothed].label} (raw)`, colorOf: smoothed, faint: true }],
    hint,
    columns: () => {
      const [steps, ...ys] = inputs.metrics.columns(keys);
      const raw = ys[smoothed];
      ys[smoothed] = emaSmooth(raw, inputs.smoothing);
      return [steps, ...ys, raw];
    },
  };
}

/**
 * One line per environment, its Wilson band shaded around it; a compared run's lines dashed in the same
 * colours. Hovering reads "16/32 = 50% [34, 66]": the count behind the rate, which a bare 0.5 hides.
 */
function heldOutView(spec: ChartSpec, resolved: ResolvedSeries[], inputs: ChartInputs): ChartView {
  const envs = resolved.map((s) => s.label);
  const compare = inputs.compare ?? null;
  // Every environment the compared run was evaluated on, so it draws before this run's first result too.
  const comparedEnvs = compare ? [...new Set(compare.heldOut.map((r) => r.env))] : [];
  const series: SeriesSpec[] = [
    ...envs.map((label) => ({ label })),
    ...envs.map((label, of) => ({ label: `${label} low`, band: { of, edge: 'low' as const } })),
    ...envs.map((label, of) => ({ label: `${label} high`, band: { of, edge: 'high' as const } })),
    ...comparedEnvs.map((env) => ({
      label: `${env} · ${compare!.name}`,
      ...(envs.includes(env) ? { colorOf: envs.indexOf(env) } : {}),
      dashed: true,
    })),
  ];
  // Which results each series reads: this run's for its lines and bands, the compared run's for the dashed ones.
  const sources = [
    ...[0, 1, 2].flatMap(() => envs.map((env) => ({ env, results: inputs.heldOut }))),
    ...comparedEnvs.map((env) => ({ env, results: compare!.heldOut })),
  ];
  return {
    series,
    hint: spec.hint,
    columns: () => heldOutColumns(envs, inputs.heldOut, comparedEnvs, compare?.heldOut ?? []),
    describe: (i, step) => {
      const source = sources[i];
      const result = source && latestAt(source.results, source.env, step);
      return result ? formatSuccessCount(result.successes, result.n) : null;
    },
  };
}

/** [steps, rate per env, band low per env, band high per env, compared rate per env], over every step either run evaluated at. */
export function heldOutColumns(
  envs: readonly string[],
  heldOut: readonly HeldOutResult[],
  comparedEnvs: readonly string[] = [],
  compared: readonly HeldOutResult[] = [],
): AlignedColumns {
  const steps = [
    ...new Set([
      ...heldOut.filter((r) => envs.includes(r.env)).map((r) => r.step),
      ...compared.filter((r) => comparedEnvs.includes(r.env)).map((r) => r.step),
    ]),
  ].sort((a, b) => a - b);
  const at = (results: readonly HeldOutResult[], env: string, f: (r: HeldOutResult) => number) =>
    steps.map((step) => {
      const r = findLast(results, (x) => x.env === env && x.step === step);
      return r && r.n > 0 ? f(r) : null;
    });
  return [
    steps,
    ...envs.map((env) => at(heldOut, env, (r) => r.successes / r.n)),
    ...envs.map((env) => at(heldOut, env, (r) => wilsonInterval(r.successes, r.n)[0])),
    ...envs.map((env) => at(heldOut, env, (r) => wilsonInterval(r.successes, r.n)[1])),
    ...comparedEnvs.map((env) => at(compared, env, (r) => r.successes / r.n)),
  ];
}

/** The latest result for `env` at or before `step` (a resumed run may have evaluated a step twice: the last counts). */
function latestAt(results: readonly HeldOutResult[], env: string, step: number): HeldOutResult | undefined {
  let best: HeldOutResult | undefined;
  for (const r of results) if (r.env === env && r.step <= step && (!best || r.step >= best.step)) best = r;
  return best;
}

function findLast<T>(items: readonly T[], match: (item: T) => boolean): T | undefined {
  for (let i = items.length - 1; i >= 0; i--) if (match(items[i])) return items[i];
  return undefined;
}
