/**
 * The IndexedDB schema of the `spindle` database and its upgrade path. Each version's step is a
 * function; opening at version N runs the steps oldVersion+1 … N inside the upgrade transaction, so
 * a database of any older version reaches the current layout with its data carried over.
 *
 *   v1  runs, trajectories (run_id, env, task_id, judge_score, created_at), groups, metrics,
 *       checkpoints, settings.
 *   v2  trajectories gain `n_steps` (filled in for old records) and the split, n_steps,
 *       [run_id, created_at] and [env, created_at] indexes; new stores markers, replay,
 *       checkpoint_heads, evaluations, skills.
 *   v3  environments: the user's own environments (module sources, task-file rows), by name.
 */
import type { DBSchema, IDBPDatabase, IDBPTransaction, StoreNames } from 'idb';
import type {
  CheckpointHead,
  CheckpointRecord,
  EnvironmentRecord,
  EvaluationRecord,
  GroupRecord,
  MarkerRecord,
  MetricsRecord,
  ReplayRecord,
  RunRecord,
  SettingRecord,
  SkillRecord,
  TrajectoryRecord,
} from './records.ts';

export const DB_NAME = 'spindle';
export const DB_VERSION = 3;

export interface SpindleSchema extends DBSchema {
  runs: { key: string; value: RunRecord; indexes: { created: number } };
  trajectories: {
    key: string;
    value: TrajectoryRecord;
    indexes: {
      run_id: string;
      env: string;
      task_id: string;
      judge_score: number;
      split: string;
      created_at: number;
      n_steps: number;
      run_created: [string, number];
      env_created: [string, number];
    };
  };
  groups: { key: string; value: GroupRecord; indexes: { run_id: string; run_step: [string, number] } };
  metrics: { key: [string, number]; value: MetricsRecord };
  markers: { key: number; value: MarkerRecord; indexes: { run_step: [string, number] } };
  replay: { key: string; value: ReplayRecord; indexes: { run_id: string; run_priority: [string, number] } };
  checkpoints: { key: string; value: CheckpointRecord; indexes: { run_id: string; run_step: [string, number] } };
  checkpoint_heads: { key: string; value: CheckpointHead };
  evaluations: { key: string; value: EvaluationRecord; indexes: { run_id: string; run_step: [string, number] } };
  skills: { key: string; value: SkillRecord; indexes: { usage_count: number } };
  environments: { key: string; value: EnvironmentRecord };
  settings: { key: string; value: SettingRecord };
}

export type SpindleDB = IDBPDatabase<SpindleSchema>;
export type UpgradeTx = IDBPTransaction<SpindleSchema, StoreNames<SpindleSchema>[], 'versionchange'>;
type UpgradeStep = (db: SpindleDB, tx: UpgradeTx) => void | Promise<void>;

/** `MIGRATIONS[v - 1]` turns a version v-1 database into version v. */
const MIGRATIONS: UpgradeStep[] = [
  // v1: the first layout.
  (db) => {
    db.createObjectStore('runs', { keyPath: 'id' }).createIndex('created', 'created');
    const trajectories = db.createObjectStore('trajectories', { keyPath: 'id' });
    for (const field of ['run_id', 'env', 'task_id', 'judge_score', 'created_at'] as const)
      trajectories.createIndex(field, field);
    const groups = db.createObjectStore('groups', { keyPath: 'id' });
    groups.createIndex('run_id', 'run_id');
    groups.createIndex('run_step', ['run_id', 'step']);
    db.createObjectStore('metrics', { keyPath: ['run_id', 'step'] });
    const checkpoints = db.createObjectStore('checkpoints', { keyPath: 'id' });
    checkpoints.createIndex('run_id', 'run_id');
    checkpoints.createIndex('run_step', ['run_id', 'step']);
    db.createObjectStore('settings', { keyPath: 'key' });
  },
  // v2: step counts and split on trajectories, ordered per-run/per-env listing, the stores added since.
  async (db, tx) => {
    const trajectories = tx.objectStore('trajectories');
    trajectories.createIndex('split', 'split');
    trajectories.createIndex('n_steps', 'n_steps');
    trajectories.createIndex('run_created', ['run_id', 'created_at']);
    trajectories.createIndex('env_created', ['env', 'created_at']);
    const markers = db.createObjectStore('markers', { keyPath: 'id', autoIncrement: true });
    markers.createIndex('run_step', ['run_id', 'step']);
    // Written by nothing since the trainer keeps its replay buffer in its checkpoints; kept so that
    // existing databases open without a migration (deleteRun still clears what old runs left in it).
    const replay = db.createObjectStore('replay', { keyPath: 'id' });
    replay.createIndex('run_id', 'run_id');
    replay.createIndex('run_priority', ['run_id', 'priority']);
    db.createObjectStore('checkpoint_heads', { keyPath: 'run_id' });
    const evaluations = db.createObjectStore('evaluations', { keyPath: 'id' });
    evaluations.createIndex('run_id', 'run_id');
    evaluations.createIndex('run_step', ['run_id', 'step']);
    db.createObjectStore('skills', { keyPath: 'name' }).createIndex('usage_count', 'usage_count');
    // Data: v1 records had no n_steps (and very old ones no split).
    for (let cursor = await trajectories.openCursor(); cursor; cursor = await cursor.continue()) {
      const record = cursor.value;
      if (typeof record.n_steps !== 'number' || record.split === undefined) {
        await cursor.update({ ...record, n_steps: record.steps?.length ?? 0, split: record.split ?? 'train' });
      }
    }
  },
  // v3: user environments.
  (db) => {
    db.createObjectStore('environments', { keyPath: 'name' });
  },
];

if (MIGRATIONS.length !== DB_VERSION) throw new Error('schema.ts: MIGRATIONS must have one step per version');

/** Runs the steps that take a database from `oldVersion` to `newVersion` (inside the upgrade transaction). */
export async function upgrade(db: SpindleDB, oldVersion: number, newVersion: number, tx: UpgradeTx): Promise<void> {
  // Only IndexedDB requests may be awaited here (anything else lets the upgrade transaction commit),
  // so a synchronous step is not awaited at all.
  for (let v = oldVersion + 1; v <= newVersion; v++) {
    const pending = MIGRATIONS[v - 1](db, tx);
    if (pending) await pending;
  }
}

/** Every object store, for whole-database operations (snapshots, deleting a run). */
export const ALL_STORES = [
  'runs',
  'trajectories',
  'groups',
  'metrics',
  'markers',
  'replay',
  'checkpoints',
  'checkpoint_heads',
  'evaluations',
  'skills',
  'environments',
  'settings',
] as const satisfies readonly StoreNames<SpindleSchema>[];

/** The stores that exist at a given version (a snapshot of an older database lists only these). */
export function storesAtVersion(version: number): StoreNames<SpindleSchema>[] {
  const v1 = ['runs', 'trajectories', 'groups', 'metrics', 'checkpoints', 'settings'] as const;
  if (version < 2) return [...v1];
  return version >= 3 ? [...ALL_STORES] : ALL_STORES.filter((s) => s !== 'environments');
}
