/**
 * Calibration maps as the run config holds them (`judge.calibration`): judge id → the monotone map that
 * judge's raw scores pass through before the judges' scores are combined. A saved calibration file's
 * `maps` is this mapping (judge/calibration-map.ts fits, saves and reads them; the group step applies
 * them in runs, judge/group-step.ts). Plain JSON, so they are stored with every run.
 */

export type CalibrationMap =
  | { kind: 'identity' }
  /** Piecewise linear through `(x[i], y[i])`, x ascending, y non-decreasing; flat outside the range. */
  | { kind: 'isotonic'; x: number[]; y: number[] }
  /** y = a·x + b, clamped to [0, 1]. */
  | { kind: 'affine'; a: number; b: number };

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

function validMap(value: unknown): value is CalibrationMap {
  if (typeof value !== 'object' || value === null) return false;
  const map = value as Record<string, unknown>;
  if (map.kind === 'identity') return true;
  if (map.kind === 'affine') return finite(map.a) && finite(map.b);
  if (map.kind !== 'isotonic' || !Array.isArray(map.x) || !Array.isArray(map.y)) return false;
  const [x, y] = [map.x as unknown[], map.y as unknown[]];
  return (
    x.length === y.length &&
    x.length > 0 &&
    x.every(finite) &&
    y.every(finite) &&
    x.every((v, i) => i === 0 || v > x[i - 1]) &&
    y.every((v, i) => i === 0 || v >= y[i - 1])
  );
}

/**
 * What is wrong with a mapping of judge id → calibration map (the first problem, saying what a map
 * looks like), or null: the one check of both the config field and a saved calibration file.
 */
export function calibrationMapsProblem(maps: unknown): string | null {
  if (typeof maps !== 'object' || maps === null || Array.isArray(maps))
    return `must map judge ids to calibration maps, e.g. {rule: {kind: affine, a: 0.9, b: 0.05}}`;
  for (const [id, map] of Object.entries(maps)) {
    if (!validMap(map))
      return `the map for judge "${id}" is not a valid identity, affine (finite a, b), or isotonic (ascending x, non-decreasing y, as many of each) map`;
  }
  return null;
}
