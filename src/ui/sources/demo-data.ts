/**
 * Made-up but well-formed data for `?demo`: lets every screen be seen (and its layout checked)
 * without a model, a run or stored data. Never mixed with real data: the app shows a banner.
 */
import type { JudgeVote, Task, Trajectory, TrajectoryStep } from '../../contracts.ts';

export function demoTask(env: string, difficulty: number, seed: number): Task {
  const a = 7 + ((seed * 13) % 40);
  const b = 3 + ((seed * 7) % 30);
  return { id: `${env}/train/${difficulty}/${seed}`, env, split: seed % 5 === 0 ? 'test' : 'train', difficulty, seed, prompt: `What is ${a} * ${b} + ${difficulty}?`, data: { answer: a * b + difficulty } };
}

/** The assistant text of a scripted episode: think, call calc, answer (wrong when `wrong`). */
export function demoTurns(task: Task, wrong: boolean): { turns: string[]; step: TrajectoryStep } {
  const expr = task.prompt.replace(/^What is |\?$/g, '');
  const answer = Number(task.data.answer) + (wrong ? 10 : 0);
  const step: TrajectoryStep = {
    step_id: 0, turn: 0, thought: `I should compute ${expr} exactly with the calculator.`,
    tool_call: { tool_name: 'calc', parameters: { expression: expr }, result: String(task.data.answer), error: null, latency_ms: 3 + (task.seed % 9) },
    observation: String(task.data.answer), timestamp: Date.now() / 1000,
  };
  return {
    turns: [
      `<think>I should compute ${expr} exactly with the calculator.</think>\n<tool_call>{"name": "calc", "arguments": {"expression": "${expr}"}}</tool_call>`,
      `<think>The tool says ${task.data.answer}.</think>\nThe answer is ${answer}.`,
    ],
    step,
  };
}

export function demoVotes(score: number, seed: number): JudgeVote[] {
  return [
    { judge_id: 'rule', score, rationale: score === 1 ? 'Final answer matches the expected value.' : 'Final answer differs from the expected value.', latency_ms: 1 },
    { judge_id: 'remote-1', score: Math.max(0, Math.min(1, score * 0.9 + ((seed % 3) - 1) * 0.1)), rationale: 'Used the calculator correctly; explanation is brief.', latency_ms: 800 + (seed % 400), dimensions: { correctness: score * 10, tool_use: 8, efficiency: 7 } },
  ];
}

export function demoTrajectory(i: number): Trajectory {
  const envs = ['arith_tool', 'json_extract', 'shell_exec'];
  const env = envs[i % envs.length];
  const task = demoTask(env, 1 + (i % 5), i);
  const wrong = i % 3 === 0;
  const { turns, step } = demoTurns(task, wrong);
  const score = wrong ? 0 : 1;
  const votes = demoVotes(score, i);
  return {
    id: `demo-${i}`, task_id: task.id, task_description: task.prompt, model_id: 'spindle-micro', steps: i % 7 === 0 ? [] : [step],
    final_response: turns[1].split('\n').pop() ?? null, success: !wrong, judge_score: (votes[0].score! + votes[1].score!) / 2,
    token_count: 60 + (i % 40), wall_time_seconds: 1 + (i % 5) * 0.4, env, split: task.split, difficulty: task.difficulty, seed: i,
    group_id: `g-${Math.floor(i / 4)}`, run_id: `run-${1 + (i % 2)}`,
    messages: [{ role: 'user', content: task.prompt }, { role: 'assistant', content: turns[0] }, { role: 'tool', content: step.observation }, { role: 'assistant', content: turns[1] }],
    tools: [], tokens: [], assistant_mask: [], logprobs: [], turn_spans: [], finish_reason: 'answer', votes,
    sampling: { temperature: 1, top_k: 0, top_p: 1, max_new_tokens: 96 }, created_at: Date.UTC(2025, 0, 1) + i * 60_000,
  };
}
