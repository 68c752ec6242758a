/**
 * Spindle's storage: IndexedDB (idb) in the browser, the same API over fake-indexeddb in Node
 * (`openFileStore` for the CLI). Import from here.
 */
export { openStore, write, type Store, type OpenOptions } from './db.ts';
export { StoreError, isQuotaError, type StoreErrorCode } from './errors.ts';
export { DB_NAME, DB_VERSION, type SpindleSchema, type SpindleDB } from './schema.ts';
export type * from './records.ts';
export { createRun, getRun, listRuns, setRunStatus, deleteRun, newId } from './runs.ts';
export {
  putTrajectory,
  putTrajectories,
  getTrajectory,
  getTrajectories,
  deleteTrajectories,
  putScoredGroup,
  setGroupAdvantages,
  getGroup,
  listGroups,
} from './trajectories.ts';
export { appendMetrics, listMetrics, addMarker, listMarkers } from './metrics.ts';
export {
  saveCheckpoint,
  stageCheckpoint,
  commitCheckpoint,
  loadLatestCheckpoint,
  loadCheckpoint,
  getCheckpointHead,
  listCheckpoints,
  type CheckpointInput,
} from './checkpoints.ts';
export { putEvaluation, listEvaluations } from './evaluations.ts';
export { putSkill, getSkill, listSkills, deleteSkill, recordSkillUse } from './skills.ts';
export { getSetting, setSetting, deleteSetting } from './settings.ts';
export {
  putEnvironment,
  getEnvironmentRecord,
  listEnvironmentRecords,
  deleteEnvironmentRecord,
} from './environments.ts';
export {
  TrajectoryCommons,
  queryTrajectories,
  iterateTrajectories,
  trajectoryStats,
  countTrajectories,
  type TrajectoryFilter,
  type PageOptions,
  type Page,
  type DatasetStats,
} from './dataset.ts';
export {
  storageEstimate,
  requestPersistence,
  describeEstimate,
  formatBytes,
  type StorageEstimateInfo,
} from './quota.ts';
