/** The Judges screen's calibration files, read as the CLI reads them: a labelled set (judge/calibration-set.ts). */
export { readCalibrationSet } from '../../judge/calibration-set.ts';
export type { JsonlProblem } from '../../format/jsonl.ts';
