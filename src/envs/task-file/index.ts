/** Task files: a user's questions and answers (JSONL, JSON, CSV, TSV, Parquet) as an environment, with their verifiers. */
export {
  readTaskFile,
  taskFileFormat,
  MAX_TASK_FILE_BYTES,
  MAX_TASK_ROWS,
  type TaskFileFormat,
  type TaskFileLimits,
} from './read.ts';
export { taskFileSpec, rowKey, type TaskFileOptions, type TaskFileSpec } from './spec.ts';
export { TaskFileError, FIELD_ALIASES, MAX_PROBLEMS, type TaskRow } from './rows.ts';
export { parseCsv, csvRecords, type CsvRecord } from './csv.ts';
export {
  checkVerifier,
  verify,
  extractFinalNumber,
  extractChoice,
  VERIFIER_TYPES,
  VERIFIER_FIELDS,
  type VerifierConfig,
  type VerifierType,
} from './verifiers.ts';
export type { Verdict } from './verdict.ts';
export { JS_DEFAULTS } from './js-verifier.ts';
