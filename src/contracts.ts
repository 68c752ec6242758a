/**
 * The plain data every stage of the data path shares (docs/architecture.md). Everything here survives
 * `structuredClone` and JSON: no classes, no tensors, no functions. Field names are
 * snake_case on the trajectory and Atropos (`ScoredGroup`) so exports need no renaming.
 * Beside the data, the one rule about it every stage applies: `isSuccess`.
 */

export type Role = 'system' | 'user' | 'assistant' | 'tool';
/** `validation` is for choices made during training (the safety monitor); `test` only ever reports. */
export type Split = 'train' | 'validation' | 'test';

export interface ChatMessage {
  role: Role;
  content: string;
}

/** A tool as the model sees it in the `<tools>` block: OpenAI/Hermes function schema. */
export interface ToolSchema {
  name: string;
  description: string;
  parameters: {
    type: 'object';
    properties: Record<string, { type: string; description?: string; enum?: string[] }>;
    required?: string[];
  };
}

/** One call of one tool. */
export interface ToolCall {
  tool_name: string;
  parameters: Record<string, unknown>;
  /** What the tool returned, as the observation text the model sees. */
  result: string;
  /** Set when the call failed (tool error, timeout, parse error of the call itself). */
  error: string | null;
  latency_ms: number;
}

/**
 * One step of an episode: one tool call and its observation. An assistant
 * turn with several `<tool_call>`s yields several steps sharing `turn`; only the first carries `thought`.
 */
export interface TrajectoryStep {
  step_id: number;
  /** Index of the assistant turn (0-based) this step came from. */
  turn: number;
  /** The `<think>` text of the turn, or null. */
  thought: string | null;
  tool_call: ToolCall | null;
  observation: string;
  /** Unix time in seconds, like Python's `time.time()`. */
  timestamp: number;
}

export interface JudgeVote {
  judge_id: string;
  /** In [0, 1], or null when the judge could not score (never a silent 0). */
  score: number | null;
  rationale: string;
  latency_ms: number;
  /** Rubric dimensions, each 0–10, when the judge gives them. */
  dimensions?: Record<string, number>;
  /** Score before the judge's calibration map was applied. */
  raw_score?: number | null;
  cost?: { prompt_tokens: number; completion_tokens: number; usd: number };
}

export interface SamplingParams {
  temperature: number;
  top_k: number;
  top_p: number;
  max_new_tokens: number;
}

export type FinishReason = 'answer' | 'max_steps' | 'max_tokens' | 'error';

/** A task an environment generated: everything needed to run and to evaluate one episode. */
export interface Task {
  /** Stable id: `${env}/${split}/${difficulty}/${seed}` for generated tasks. */
  id: string;
  env: string;
  split: Split;
  difficulty: number;
  seed: number;
  /** The user message. */
  prompt: string;
  /** Environment-specific data for `evaluate()` and the tools (expected answer, files, hidden tests). JSON-safe. */
  data: Record<string, unknown>;
}

/** A full episode, with what training needs. */
export interface Trajectory {
  /** Unique id of this trajectory. */
  id: string;
  task_id: string;
  task_description: string;
  model_id: string;
  steps: TrajectoryStep[];
  final_response: string | null;
  /** `isSuccess(judge_score)`: null when there is no score. */
  success: boolean | null;
  /** Combined judge score in [0, 1], or null before judging / when no judge could score. */
  judge_score: number | null;
  token_count: number;
  wall_time_seconds: number;

  env: string;
  split: Split;
  difficulty: number;
  /** The sampling seed: with the same weights and task, this seed replays the episode. */
  seed: number;
  /** Samples of the same task in one GRPO group share this id. */
  group_id: string;
  run_id: string | null;
  /** The conversation: system (with tools), user task, assistant turns, tool responses. */
  messages: ChatMessage[];
  tools: ToolSchema[];
  /** ChatML token ids of the whole conversation (empty when the policy had no tokenizer). */
  tokens: number[];
  /** 1 on tokens the policy sampled, 0 on prompt and tool-response tokens; same length as `tokens`. */
  assistant_mask: number[];
  /** Log-probability of each sampled token under the sampling policy; 0 where `assistant_mask` is 0. */
  logprobs: number[];
  /** `[start, end)` token offsets of each assistant turn in `tokens`, for per-step process rewards. */
  turn_spans: [number, number][];
  finish_reason: FinishReason;
  votes: JudgeVote[];
  sampling: SamplingParams;
  /** Milliseconds since the epoch. */
  created_at: number;
}

/**
 * Atropos's ScoredDataGroup, field names exact, so the JSONL Spindle writes is what an Atropos
 * trajectory API server accepts. `masks` holds the token id on policy tokens and -100 elsewhere;
 * `inference_logprobs` holds 1.0 as the placeholder on non-policy tokens.
 */
export interface ScoredGroup {
  tokens: number[][];
  masks: number[][];
  scores: number[];
  advantages: number[][] | null;
  ref_logprobs: number[][] | null;
  messages: ChatMessage[][] | null;
  inference_logprobs: number[][] | null;
  generation_params: Record<string, unknown> | null;
  overrides: Record<string, unknown>[] | null;
  group_overrides: Record<string, unknown> | null;
  images: null;
  env_id: number | null;
}

/** Metric names follow TRL (`reward`, `kl`, `clip_ratio/region_mean`, …) plus `train/loss`, `eval/<env>/success`. */
export type Metrics = Record<string, number>;

export interface MetricsRecord {
  run_id: string;
  step: number;
  /** Milliseconds since the epoch. */
  time: number;
  metrics: Metrics;
}

/** Things that happen during a run that a chart marks on its time axis. */
export type RunMarker =
  | { kind: 'curriculum'; run_id: string; step: number; env: string; from: number; to: number; time: number }
  | {
      kind: 'regression';
      run_id: string;
      step: number;
      benchmark: string;
      baseline: number;
      current: number;
      rolled_back_to: number | null;
      time: number;
    };

/**
 * A user's environment as data (envs/sources.ts builds it): a JavaScript module, or rows of a task file
 * with their verifier. It travels with rollout jobs to workers, is stored with a run and in the app's
 * store, and is named (with its digest) in what a run exports, so the run can be reproduced.
 */
export type EnvironmentSource =
  | {
      kind: 'module';
      /** The environment's name (what the module's `name` says). */
      name: string;
      /** The module's JavaScript. */
      source: string;
      /** Where it came from (a file name), for messages and metadata; null when typed in the app. */
      file: string | null;
    }
  | {
      kind: 'tasks';
      name: string;
      /** The file's rows as read (envs/task-file), JSON-safe. */
      rows: Record<string, unknown>[];
      /** The verifier the config chose for rows that name none; null: per row, else exact. */
      verifier: Record<string, unknown> | null;
      file: string | null;
    };

/** A labelled item for judge calibration: a trajectory and its gold score in [0, 1]. */
export interface CalibrationItem {
  trajectory: Trajectory;
  gold: number;
}

/** How far below 1 a score may fall from rounding (a trimmed mean of 1s, a float sum) and still be full marks. */
const FULL_MARKS_TOLERANCE = 1e-9;

/**
 * The one success rule (one definition per rule): a trajectory succeeded when its score
 * (the environment's, or the judges' combined score, in [0, 1]) is full marks, 1. No score, no verdict.
 */
export function isSuccess(score: number): boolean;
export function isSuccess(score: number | null): boolean | null;
export function isSuccess(score: number | null): boolean | null {
  return score === null ? null : score >= 1 - FULL_MARKS_TOLERANCE;
}

/** How the system prompt lists the tools (src/format/system-prompt.ts): Hermes schemas, signatures, or signatures with descriptions. */
export type SystemPromptStyle = 'full' | 'compact' | 'described';
export const SYSTEM_PROMPT_STYLES: readonly SystemPromptStyle[] = ['full', 'compact', 'described'];
