/**
 * Judge calibration, saved and loaded, one operation for the CLI and the app:
 * - `calibrateJudges` (`spindle calibrate`): the config's judges score a labelled set (judge/calibration-set.ts,
 *   judge/calibrate.ts), one monotone map is fitted per judge, and the maps come back as a calibration file;
 * - `withCalibration` (`spindle train|collect --calibration FILE`): a saved file's maps go into a run config's
 *   `judge.calibration`, which the run's group step applies to every vote (judge/group-step.ts);
 * - `calibrationFileOf`, `readCalibrationFile`: the file the Judges screen saves and loads.
 * A rule judge is calibrated on its format checks: a labelled item carries its trajectory, not the task
 * data the environment's verifier would need.
 */
import type { CalibrationMap, RunConfig } from '../../config/schema.ts';
import { calibrate, type CalibrationReport } from '../../judge/calibrate.ts';
import {
  parseCalibration,
  serializeCalibration,
  type CalibrationFile,
  type CalibrationMethod,
} from '../../judge/calibration-map.ts';
import { readCalibrationSet } from '../../judge/calibration-set.ts';
import { createGroupJudges, createJudges, type JudgeDeps } from '../../judge/from-config.ts';
import { chosenJudges } from '../../judge/group-step.ts';

/** A labelled set's problems shown at most, the rest counted. */
const PROBLEMS_SHOWN = 5;

export interface CalibrateJudgesOptions {
  /** API keys and the model-judge loader (the self-judge, which needs the policy, cannot be calibrated here). */
  deps: Pick<JudgeDeps, 'getSecret' | 'loadModelJudge'>;
  method?: CalibrationMethod;
  onItem?: (done: number, total: number) => void;
}

/** The labelled set's items, or an error listing its bad lines: a calibration fitted on part of a set would not say so. */
function labelledItems(setText: string, setName: string) {
  const { items, problems } = readCalibrationSet(setText);
  if (problems.length) {
    const shown = problems
      .slice(0, PROBLEMS_SHOWN)
      .map((p) => `line ${p.line}: ${p.message}`)
      .join('; ');
    const more = problems.length > PROBLEMS_SHOWN ? `; and ${problems.length - PROBLEMS_SHOWN} more` : '';
    throw new Error(`${setName}: ${shown}${more}. Fix those lines and run again.`);
  }
  if (!items.length)
    throw new Error(`${setName} holds no labelled items: write one {"trajectory": {…}, "gold": 0.8} per line.`);
  return items;
}

/** Every judge the config chooses scores every labelled item; the fitted maps come back with the report and as the file to save. */
export async function calibrateJudges(
  config: RunConfig,
  setText: string,
  setName: string,
  options: CalibrateJudgesOptions,
): Promise<{ report: CalibrationReport; file: string }> {
  const items = labelledItems(setText, setName);
  const chosen = chosenJudges(config.judge);
  const judges = [...(await createJudges(chosen, options.deps)), ...createGroupJudges(chosen, options.deps)];
  if (!judges.length) throw new Error('The config lists no judges (judge.judges) to calibrate.');
  const { report } = await calibrate(judges, items, { method: options.method, onItem: options.onItem });
  return { report, file: serializeCalibration(report.file) };
}

/** A saved calibration file as text, for maps fitted one judge at a time (the Judges screen). */
export function calibrationFileOf(maps: Record<string, CalibrationMap>): string {
  const method: CalibrationMethod =
    Object.values(maps).every((m) => m.kind === 'affine') && Object.keys(maps).length ? 'affine' : 'isotonic';
  return serializeCalibration({ version: 1, method, maps });
}

/** A saved calibration file's maps; the error names the file and what is wrong with it. */
export function readCalibrationFile(text: string, fileName: string): CalibrationFile {
  try {
    return parseCalibration(text);
  } catch (e) {
    throw new Error(`${fileName}: ${(e as Error).message}`, { cause: e });
  }
}

/**
 * The config with a saved calibration's maps in `judge.calibration` (a map already there for the same
 * judge is replaced), and the judges the file has maps for that the config does not list (their maps do nothing).
 */
export function withCalibration(
  config: RunConfig,
  text: string,
  fileName: string,
): { config: RunConfig; unlisted: string[] } {
  const { maps } = readCalibrationFile(text, fileName);
  const listed = new Set(config.judge.judges.map((j) => j.id));
  const calibrated = { ...config, judge: { ...config.judge, calibration: { ...config.judge.calibration, ...maps } } };
  return { config: calibrated, unlisted: Object.keys(maps).filter((id) => !listed.has(id)) };
}
