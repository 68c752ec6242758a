/** Small trajectories and tasks for judge tests. */
import type { Task, Trajectory, TrajectoryStep } from '../../src/contracts.ts';

export function makeTask(overrides: Partial<Task> = {}): Task {
  return {
    id: 'arith/train/1/7',
    env: 'arith',
    split: 'train',
    difficulty: 1,
    seed: 7,
    prompt: 'What is 6 * 7?',
    data: { answer: '42' },
    ...overrides,
  };
}

export function makeStep(overrides: Partial<TrajectoryStep> = {}): TrajectoryStep {
  return {
    step_id: 0,
    turn: 0,
    thought: 'Use the calculator.',
    tool_call: { tool_name: 'calculator', parameters: { expression: '6*7' }, result: '42', error: null, latency_ms: 3 },
    observation: '42',
    timestamp: 0,
    ...overrides,
  };
}

export function makeTrajectory(overrides: Partial<Trajectory> = {}): Trajectory {
  return {
    id: 't1',
    task_id: 'arith/train/1/7',
    task_description: 'What is 6 * 7?',
    model_id: 'test',
    steps: [makeStep()],
    final_response: 'The answer is 42.',
    success: null,
    judge_score: null,
    token_count: 0,
    wall_time_seconds: 0,
    env: 'arith',
    split: 'train',
    difficulty: 1,
    seed: 7,
    group_id: 'g',
    run_id: null,
    messages: [
      { role: 'user', content: 'What is 6 * 7?' },
      {
        role: 'assistant',
        content:
          '<think>Use the calculator.</think>\n<tool_call>{"name": "calculator", "arguments": {"expression": "6*7"}}</tool_call>',
      },
      { role: 'tool', content: '<tool_response>42</tool_response>' },
      { role: 'assistant', content: 'The answer is 42.' },
    ],
    tools: [],
    tokens: [],
    assistant_mask: [],
    logprobs: [],
    turn_spans: [],
    finish_reason: 'answer',
    votes: [],
    sampling: { temperature: 1, top_k: 0, top_p: 1, max_new_tokens: 96 },
    created_at: 0,
    ...overrides,
  };
}
