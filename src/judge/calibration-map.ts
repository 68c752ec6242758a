/**
 * Per-judge monotone maps from a judge's raw score to a calibrated one: isotonic regression
 * (pool-adjacent-violators) or affine least squares, fitted on (raw, gold) pairs. Maps are plain JSON
 * (config/calibration.ts): saved as a calibration file, read back into a run config's
 * `judge.calibration`, stored with the run and applied to every vote (group-step.ts, ensemble.ts).
 */
import { calibrationMapsProblem, type CalibrationMap } from '../config/calibration.ts';
import type { JudgeVote } from '../contracts.ts';

export type { CalibrationMap };

export type CalibrationMethod = 'isotonic' | 'affine';

export interface Pair {
  raw: number;
  gold: number;
}

const clampUnit = (v: number): number => Math.min(1, Math.max(0, v));

/**
 * Pool-adjacent-violators on points sorted by raw score (ties pooled first). Each final block becomes two
 * knots, at its smallest and largest raw score, both at the block's mean gold; between blocks the map is
 * linear, so unseen raw scores get an interpolated value rather than a jump.
 */
export function fitIsotonic(pairs: Pair[]): CalibrationMap {
  if (pairs.length === 0) return { kind: 'identity' };
  const sorted = [...pairs].sort((p, q) => p.raw - q.raw);
  type Block = { lo: number; hi: number; sum: number; n: number };
  const blocks: Block[] = [];
  for (const p of sorted) {
    const last = blocks[blocks.length - 1];
    if (last && last.hi === p.raw) {
      last.sum += p.gold;
      last.n++;
    } else blocks.push({ lo: p.raw, hi: p.raw, sum: p.gold, n: 1 });
    // Merge backwards while the block means decrease.
    while (blocks.length > 1) {
      const b = blocks[blocks.length - 1];
      const a = blocks[blocks.length - 2];
      if (a.sum / a.n <= b.sum / b.n) break;
      blocks.splice(blocks.length - 2, 2, { lo: a.lo, hi: b.hi, sum: a.sum + b.sum, n: a.n + b.n });
    }
  }
  const x: number[] = [];
  const y: number[] = [];
  for (const b of blocks) {
    const v = b.sum / b.n;
    x.push(b.lo);
    y.push(v);
    if (b.hi !== b.lo) {
      x.push(b.hi);
      y.push(v);
    }
  }
  return { kind: 'isotonic', x, y };
}

/** Least-squares line gold ≈ a·raw + b; a constant raw score gives the mean gold. */
export function fitAffine(pairs: Pair[]): CalibrationMap {
  if (pairs.length === 0) return { kind: 'identity' };
  const n = pairs.length;
  const mx = pairs.reduce((s, p) => s + p.raw, 0) / n;
  const my = pairs.reduce((s, p) => s + p.gold, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const p of pairs) {
    sxy += (p.raw - mx) * (p.gold - my);
    sxx += (p.raw - mx) ** 2;
  }
  if (sxx === 0) return { kind: 'affine', a: 0, b: my };
  const a = sxy / sxx;
  return { kind: 'affine', a, b: my - a * mx };
}

export function fitCalibrationMap(pairs: Pair[], method: CalibrationMethod): CalibrationMap {
  return method === 'isotonic' ? fitIsotonic(pairs) : fitAffine(pairs);
}

export function applyCalibration(map: CalibrationMap, raw: number): number {
  switch (map.kind) {
    case 'identity':
      return raw;
    case 'affine':
      return clampUnit(map.a * raw + map.b);
    case 'isotonic': {
      const { x, y } = map;
      if (raw <= x[0]) return y[0];
      if (raw >= x[x.length - 1]) return y[y.length - 1];
      let i = 1;
      while (x[i] < raw) i++;
      const t = (raw - x[i - 1]) / (x[i] - x[i - 1]);
      return clampUnit(y[i - 1] + t * (y[i] - y[i - 1]));
    }
  }
}

/**
 * A vote through its judge's map, if `maps` has one: the score calibrated from the vote's raw score,
 * which the vote keeps (`raw_score`). Calibrated from the raw score, so a vote calibrated twice (by the
 * ensemble, then in the group step) is calibrated once. The environment's own vote (`env:`) is a
 * verdict, never calibrated.
 */
export function calibrateVote(vote: JudgeVote, maps: Readonly<Record<string, CalibrationMap>>): JudgeVote {
  const raw = vote.raw_score !== undefined ? vote.raw_score : vote.score;
  const map = vote.judge_id.startsWith('env:') ? undefined : maps[vote.judge_id];
  if (!map || raw === null) return { ...vote, raw_score: raw };
  return { ...vote, raw_score: raw, score: applyCalibration(map, raw) };
}

export interface CalibrationFile {
  version: 1;
  method: CalibrationMethod;
  /** Judge id → map. */
  maps: Record<string, CalibrationMap>;
}

/** A calibration as saved (`calibration.json`): what `spindle calibrate` and the Judges screen write. */
export function serializeCalibration(file: CalibrationFile): string {
  return `${JSON.stringify(file, null, 2)}\n`;
}

/** Reads a saved calibration file, naming what is wrong when it is not one. */
export function parseCalibration(json: string): CalibrationFile {
  let data: Partial<CalibrationFile>;
  try {
    data = JSON.parse(json) as Partial<CalibrationFile>;
  } catch (e) {
    throw new Error(
      `Calibration file: not valid JSON (${(e as Error).message}); it is the JSON \`spindle calibrate\` or the Judges screen saves.`,
      { cause: e },
    );
  }
  if (typeof data !== 'object' || data === null)
    throw new Error('Calibration file: expected an object {"version": 1, "method": …, "maps": {…}}.');
  if (data.version !== 1)
    throw new Error(`Calibration file: unsupported version ${String(data.version)} (expected 1).`);
  const problem = calibrationMapsProblem(data.maps);
  if (problem) throw new Error(`Calibration file: "maps" ${problem}.`);
  return { version: 1, method: data.method === 'affine' ? 'affine' : 'isotonic', maps: data.maps! };
}
