/** Reads a labelled calibration set: JSON Lines of `{"trajectory": {...}, "gold": 0.8}` (gold in [0, 1]). */
import type { CalibrationItem } from '../../../contracts.ts';
import { parseJsonl, type LineError } from '../../lib/jsonl.ts';

function checkItem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null) return 'each line must be an object {"trajectory": …, "gold": …}';
  const v = value as Record<string, unknown>;
  if (typeof v.gold !== 'number' || !(v.gold >= 0 && v.gold <= 1)) return `"gold" must be a number in [0, 1], got ${JSON.stringify(v.gold)}`;
  const t = v.trajectory as Record<string, unknown> | undefined;
  if (typeof t !== 'object' || t === null) return '"trajectory" is missing (export trajectories from the Trajectories tab to get the shape)';
  if (!Array.isArray(t.messages) || !Array.isArray(t.steps)) return '"trajectory" needs "messages" and "steps" arrays (a Spindle trajectory)';
  return null;
}

export function parseCalibrationFile(text: string): { items: CalibrationItem[]; errors: LineError[] } {
  return parseJsonl<CalibrationItem>(text, checkItem);
}
