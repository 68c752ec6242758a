/** Small valid trajectories for store and export tests. */
import type { Trajectory } from '../../src/contracts.ts';

let counter = 0;

export function makeTrajectory(overrides: Partial<Trajectory> = {}): Trajectory {
  const n = counter++;
  const base: Trajectory = {
    id: `t-${n}`,
    task_id: `arith_tool/train/2/${n}`,
    task_description: `What is ${n} + 2?`,
    model_id: 'spindle-micro',
    steps: [
      {
        step_id: 0,
        turn: 0,
        thought: 'add them',
        timestamp: 1_700_000_000 + n,
        tool_call: {
          tool_name: 'calculator',
          parameters: { expression: `${n}+2` },
          result: String(n + 2),
          error: null,
          latency_ms: 3,
        },
        observation: String(n + 2),
      },
    ],
    final_response: String(n + 2),
    success: true,
    judge_score: 0.75,
    token_count: 6,
    wall_time_seconds: 0.5,
    env: 'arith_tool',
    split: 'train',
    difficulty: 2,
    seed: n,
    group_id: `g-${Math.floor(n / 4)}`,
    run_id: 'run-a',
    messages: [
      { role: 'system', content: 'You can call tools.' },
      { role: 'user', content: `What is ${n} + 2?` },
      {
        role: 'assistant',
        content: `<think>add them</think><tool_call>{"name": "calculator", "arguments": {"expression": "${n}+2"}}</tool_call>`,
      },
      { role: 'tool', content: `<tool_response>${n + 2}</tool_response>` },
      { role: 'assistant', content: `${n + 2}` },
    ],
    tools: [
      {
        name: 'calculator',
        description: 'Evaluates arithmetic.',
        parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
      },
    ],
    tokens: [1, 2, 3, 4, 5, 6],
    assistant_mask: [0, 0, 1, 1, 0, 1],
    logprobs: [0, 0, -0.5, -0.25, 0, -1.5],
    turn_spans: [
      [2, 4],
      [5, 6],
    ],
    finish_reason: 'answer',
    votes: [{ judge_id: 'rule', score: 0.75, rationale: 'correct', latency_ms: 1 }],
    sampling: { temperature: 1, top_k: 0, top_p: 1, max_new_tokens: 96 },
    created_at: 1_700_000_000_000 + n,
  };
  return { ...base, ...overrides };
}
