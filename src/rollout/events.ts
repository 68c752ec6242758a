/** Events an episode emits while it runs, for live display (plain data: they cross worker boundaries). */
import type { FinishReason, Trajectory, TrajectoryStep } from '../contracts.ts';

export type EpisodeEvent =
  | { type: 'turn_start'; turn: number }
  /** A piece of assistant text as the policy samples it. */
  | { type: 'text'; turn: number; piece: string }
  /** The whole assistant turn once sampled. */
  | { type: 'turn_end'; turn: number; text: string; finish_reason: 'stop' | 'length' }
  | { type: 'tool_call'; turn: number; step_id: number; name: string; arguments: Record<string, unknown> }
  /** A finished step: a tool result, a tool error, or a parse error (then `tool_call.tool_name` is ''). */
  | { type: 'tool_result'; turn: number; step: TrajectoryStep }
  | { type: 'done'; finish_reason: FinishReason; trajectory: Trajectory };

export type EpisodeListener = (event: EpisodeEvent) => void;
