/**
 * Per-judge monotone maps from a judge's raw score to a calibrated one: isotonic regression
 * (pool-adjacent-violators) or affine least squares, fitted on (raw, gold) pairs. Maps are plain JSON so
 * they are saved with the run and applied by the ensemble.
 */

export type CalibrationMap =
  | { kind: 'identity' }
  /** Piecewise linear through `(x[i], y[i])`, x ascending, y non-decreasing; flat outside the range. */
  | { kind: 'isotonic'; x: number[]; y: number[] }
  /** y = a·x + b, clamped to [0, 1]. */
  | { kind: 'affine'; a: number; b: number };

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

export interface CalibrationFile {
  version: 1;
  method: CalibrationMethod;
  /** Judge id → map. */
  maps: Record<string, CalibrationMap>;
}

export function serializeCalibration(file: CalibrationFile): string {
  return JSON.stringify(file, null, 2);
}

/** Reads a saved calibration file, naming what is wrong when it is not one. */
export function parseCalibration(json: string): CalibrationFile {
  const data = JSON.parse(json) as Partial<CalibrationFile>;
  if (data.version !== 1) throw new Error(`Calibration file: unsupported version ${String(data.version)} (expected 1).`);
  if (typeof data.maps !== 'object' || data.maps === null) throw new Error('Calibration file: "maps" must be an object of judge id → map.');
  for (const [id, map] of Object.entries(data.maps)) {
    const ok = map.kind === 'identity'
      || (map.kind === 'affine' && Number.isFinite(map.a) && Number.isFinite(map.b))
      || (map.kind === 'isotonic' && Array.isArray(map.x) && Array.isArray(map.y) && map.x.length === map.y.length && map.x.length > 0
        && map.x.every((v, i) => i === 0 || v > map.x[i - 1]) && map.y.every((v, i) => i === 0 || v >= map.y[i - 1]));
    if (!ok) throw new Error(`Calibration file: map for judge "${id}" is not a valid identity, affine, or isotonic (ascending x, non-decreasing y) map.`);
  }
  return { version: 1, method: data.method === 'affine' ? 'affine' : 'isotonic', maps: data.maps };
}
