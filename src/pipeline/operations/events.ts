/**
 * The run API shared by the app and the CLI: one controller per run, a stream of typed events.
 * Events are plain data (they cross worker boundaries by structured clone).
 */
import type { JudgeVote, Metrics, RunMarker, Split, Task, Trajectory, TrajectoryStep } from '../../contracts.ts';
import type { RunConfig } from '../../config/schema.ts';

export type RunStatus = 'idle' | 'starting' | 'running' | 'paused' | 'stopping' | 'stopped' | 'finished' | 'error';

export interface QueueSizes {
  /** Tasks waiting for a rollout worker. */
  pending_tasks: number;
  /** Episodes being rolled out now. */
  in_flight: number;
  /** Finished groups waiting for the trainer. */
  ready_groups: number;
  /** How many updates the rollouts are ahead of the trainer. */
  offpolicy_updates: number;
}

export type RunEvent =
  | { type: 'status'; run_id: string; status: RunStatus; message?: string; backend?: string }
  | { type: 'episode-start'; run_id: string; trajectory_id: string; task: Task; worker: number }
  | { type: 'text'; run_id: string; trajectory_id: string; piece: string }
  | { type: 'rollout-step'; run_id: string; trajectory_id: string; step: TrajectoryStep }
  | { type: 'trajectory'; run_id: string; trajectory: Trajectory }
  | { type: 'judged'; run_id: string; trajectory_id: string; score: number | null; votes: JudgeVote[] }
  | { type: 'update'; run_id: string; step: number; metrics: Metrics }
  | { type: 'evaluation'; run_id: string; step: number; env: string; split: Split; success: number; n: number }
  /** Items of one environment's evaluation finished so far (0 as it starts), so a wait for it shows progress. */
  | {
      type: 'evaluation-progress';
      run_id: string;
      step: number;
      env: string;
      split: Split;
      done: number;
      total: number;
    }
  | { type: 'marker'; run_id: string; marker: RunMarker }
  | { type: 'checkpoint'; run_id: string; step: number; checkpoint_id: string }
  | {
      type: 'progress';
      run_id: string;
      done: number;
      total: number;
      eta_seconds: number | null;
      tokens_per_second: number | null;
      queue: QueueSizes;
    }
  | { type: 'error'; run_id: string; message: string; fatal: boolean }
  /** A judge that could not score some trajectories (its vote was null): running counts, sent when they grow. */
  | { type: 'judge-failures'; run_id: string; judge_id: string; failed: number; total: number; last_reason: string };

export type RunListener = (event: RunEvent) => void;

export interface RunController {
  start(config: RunConfig, options?: { resumeRunId?: string }): Promise<string>;
  pause(): Promise<void>;
  resume(): Promise<void>;
  stop(): Promise<void>;
  subscribe(listener: RunListener): () => void;
}
