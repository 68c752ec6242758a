/**
 * The curriculum benchmark's chart, drawn from what bench/results/curriculum*.json holds: the training
 * batch's success per update, its mean over the last 8 updates (one group of 8 an update is a jagged
 * curve), the held-out success at each level before and after, and the level changes marked.
 */
import { lineChartSvg } from './svg-chart.ts';

export interface CurriculumChartData {
  env: string;
  trainSeconds: number;
  curve: { step: number; success: number }[];
  levels: { level: number; before: { success: number }; after: { success: number } }[];
  changes: { step: number; to: number }[];
}

const WINDOW = 8;

export function curriculumChart(d: CurriculumChartData): string {
  const trailing = d.curve.map((c, i): [number, number] => {
    const recent = d.curve.slice(Math.max(0, i + 1 - WINDOW), i + 1);
    return [c.step, recent.reduce((s, r) => s + r.success, 0) / recent.length];
  });
  return lineChartSvg({
    title: `Curriculum on ${d.env} from spindle-base (${d.curve.length} updates, ${(d.trainSeconds / 60).toFixed(1)} min)`,
    xLabel: 'update',
    series: [
      { name: 'success rate (training batch)', points: d.curve.map((c) => [c.step, c.success]) },
      { name: `the same, mean of the last ${WINDOW} updates`, points: trailing },
      ...d.levels.map((l) => ({
        name: `held-out L${l.level}: before → after`,
        points: [
          [0, l.before.success],
          [d.curve.length, l.after.success],
        ] as [number, number][],
      })),
    ],
    markers: d.changes.map((c) => ({ x: c.step, label: `L${c.to}` })),
  });
}
