/**
 * What each IndexedDB object store holds. Plain, cloneable records (structured clone in IndexedDB,
 * JSON + binary chunks in the file-backed snapshot). The trajectory record is the contract's
 * `Trajectory` plus the fields the indexes need.
 */
import type { EnvironmentSource, Metrics, MetricsRecord, RunMarker, ScoredGroup, Trajectory } from '../contracts.ts';
import type { RunConfig } from '../config/schema.ts';

/** `interrupted`: it was running when the process running it died (killed, crashed), found on the next read. */
export type RunStatus = 'created' | 'running' | 'paused' | 'completed' | 'failed' | 'stopped' | 'interrupted';

export interface RunRecord {
  id: string;
  name: string;
  config: RunConfig;
  status: RunStatus;
  /** Milliseconds since the epoch. */
  created: number;
  updated: number;
  /** The latest value of every metric the run logged (kept current by `appendMetrics`). */
  metrics_summary: Metrics;
  /** Last step with metrics, or -1. */
  last_step: number;
  /** Why the run failed, when it did. */
  error: string | null;
  /** The OS process that set it running, where there is one (Node); absent in browsers and older records. */
  owner?: { pid: number } | null;
  /** The user environments it trains on, as they were when it started (absent for built-ins only). */
  environments?: EnvironmentSource[];
}

/** A stored trajectory: the contract plus `n_steps`, which the min/max-steps filter and index need. */
export interface TrajectoryRecord extends Trajectory {
  n_steps: number;
}

/** One GRPO group: the trajectories sampled for one task, and the scored group once the judges ran. */
export interface GroupRecord {
  /** The trajectories' `group_id`. */
  id: string;
  run_id: string | null;
  /** Training step that consumed the group; -1 until a trainer used it. */
  step: number;
  env: string;
  task_id: string;
  trajectory_ids: string[];
  scored: ScoredGroup | null;
  created_at: number;
}

export type MarkerRecord = RunMarker & { id?: number };

/** A replay-buffer entry: which trajectory (or group) to replay, and how much. */
export interface ReplayRecord {
  id: string;
  run_id: string;
  priority: number;
  trajectory_id: string;
  group_id: string | null;
  added_at: number;
  /** Times it was sampled into a batch. */
  uses: number;
}

/** Adapter and optimizer state at one step. Binary payloads are opaque to the store. */
export interface CheckpointRecord {
  id: string;
  run_id: string;
  step: number;
  created_at: number;
  /** Adapter weights (e.g. a safetensors file). */
  adapter: ArrayBuffer;
  /** Optimizer moments, or null when not kept. */
  optimizer: ArrayBuffer | null;
  /** Small JSON-safe facts: eval score, config hash, tensor names… */
  meta: Record<string, unknown>;
}

/** Which checkpoint of a run is current. Flipped in its own transaction after the checkpoint is written. */
export interface CheckpointHead {
  run_id: string;
  latest: string;
  previous: string | null;
}

export interface EvaluationRecord {
  id: string;
  run_id: string;
  step: number;
  /** Environment or benchmark name. */
  benchmark: string;
  /** e.g. `{ success: 0.62, avg_score: 0.7, n: 32 }`. */
  results: Record<string, number>;
  created_at: number;
}

/** A skill document (the skills → instructions → SFT workflow); `markdown` is the whole file, front matter included. */
export interface SkillRecord {
  name: string;
  description: string;
  usage_count: number;
  success_rate: number;
  /** ISO date-time. */
  created: string;
  markdown: string;
}

/** A user environment kept in the store (the Environments screen, `spindle envs add`), by name. */
export interface EnvironmentRecord {
  name: string;
  source: EnvironmentSource;
  /** Milliseconds since the epoch. */
  created: number;
  updated: number;
  /** The last audit's problems (empty: it passed), or null before any audit. */
  audit_problems: string[] | null;
}

export interface SettingRecord {
  key: string;
  value: unknown;
}

export type { MetricsRecord };
