/** Hand-built trajectories for the training tests. */
import type { Trajectory, TrajectoryStep } from '../../src/contracts.ts';

export function step(
  turn: number,
  opts: { thought?: string | null; error?: string | null; tool?: boolean } = {},
): TrajectoryStep {
  const tool = opts.tool ?? true;
  return {
    step_id: 0,
    turn,
    thought: opts.thought ?? null,
    tool_call: tool
      ? { tool_name: 'calc', parameters: { expression: '1+1' }, result: '2', error: opts.error ?? null, latency_ms: 1 }
      : null,
    observation: '2',
    timestamp: 0,
  };
}

export function trajectory(over: Partial<Trajectory> = {}): Trajectory {
  const base: Trajectory = {
    id: 't0',
    task_id: 'arith_tool/train/1/1',
    task_description: 'What is 1+1?',
    model_id: 'test',
    steps: [],
    final_response: '2',
    success: true,
    judge_score: 1,
    token_count: 0,
    wall_time_seconds: 0,
    env: 'arith_tool',
    split: 'train',
    difficulty: 1,
    seed: 1,
    group_id: 'g0',
    run_id: null,
    messages: [],
    tools: [],
    tokens: [],
    assistant_mask: [],
    logprobs: [],
    turn_spans: [],
    finish_reason: 'answer',
    votes: [],
    sampling: { temperature: 1, top_k: 0, top_p: 1, max_new_tokens: 16 },
    created_at: 0,
  };
  return { ...base, ...over };
}
