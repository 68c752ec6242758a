/**
 * Reading a labelled calibration set, the one reader the app and the CLI share: JSON Lines of
 * `{"trajectory": {…}, "gold": 0.8}`, a Spindle trajectory (as the Trajectories tab or `spindle export
 * trajectories --format trajectory-jsonl` writes it) and the score a person gave it, in [0, 1]. Every bad
 * line is named with its line in the file; the good ones are kept, so a screen can show all the problems at
 * once and a command can refuse the set with them.
 */
import type { CalibrationItem } from '../contracts.ts';
import { collectJsonl, type JsonlProblem } from '../format/jsonl.ts';
import { isUnitScore } from './types.ts';

function itemProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'each line must be an object {"trajectory": …, "gold": …}';
  const v = value as Record<string, unknown>;
  if (!isUnitScore(v.gold)) return `"gold" must be a number in [0, 1], got ${JSON.stringify(v.gold)}`;
  const t = v.trajectory as Record<string, unknown> | undefined;
  if (typeof t !== 'object' || t === null)
    return '"trajectory" is missing (export trajectories from the Trajectories tab to get the shape)';
  if (!Array.isArray(t.messages) || !Array.isArray(t.steps))
    return '"trajectory" needs "messages" and "steps" arrays (a Spindle trajectory)';
  return null;
}

/** The set's usable items, in file order, and the problem of every line that is not one. */
export function readCalibrationSet(text: string): { items: CalibrationItem[]; problems: JsonlProblem[] } {
  const { rows, problems } = collectJsonl<CalibrationItem>(text, itemProblem);
  return { items: rows.map(({ value }) => ({ trajectory: value.trajectory, gold: value.gold })), problems };
}
