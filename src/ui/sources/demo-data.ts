/**
 * Made-up but well-formed data for `?demo`: lets every screen be seen (and its layout checked)
 * without a model, a run or stored data. Never mixed with real data: the app shows a banner.
 */
import type { ChatMessage, JudgeVote, Task, Trajectory, TrajectoryStep } from '../../contracts.ts';

export function demoTask(env: string, difficulty: number, seed: number): Task {
  const a = 7 + ((seed * 13) % 40);
  const b = 3 + ((seed * 7) % 30);
  return {
    id: `${env}/train/${difficulty}/${seed}`,
    env,
    split: seed % 5 === 0 ? 'test' : 'train',
    difficulty,
    seed,
    prompt: `What is ${a} * ${b} + ${difficulty}?`,
    data: { answer: a * b + difficulty },
  };
}

/** The expected answer of a demo task "What is a * b + c?" (read back from its prompt). */
export function demoAnswer(prompt: string): number {
  const [a, b, c] = (prompt.match(/\d+/g) ?? ['0', '0', '0']).map(Number);
  return a * b + c;
}

/** The assistant text of a scripted episode: think, call calc, answer (wrong when `wrong`). */
function demoTurns(task: Task, wrong: boolean): { turns: string[]; step: TrajectoryStep } {
  const expr = task.prompt.replace(/^What is |\?$/g, '');
  const answer = Number(task.data.answer) + (wrong ? 10 : 0);
  const step: TrajectoryStep = {
    step_id: 0,
    turn: 0,
    thought: `I should compute ${expr} exactly with the calculator.`,
    tool_call: {
      tool_name: 'calc',
      parameters: { expression: expr },
      result: String(task.data.answer),
      error: null,
      latency_ms: 3 + (task.seed % 9),
    },
    observation: String(task.data.answer),
    timestamp: Date.now() / 1000,
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
    {
      judge_id: 'rule',
      score,
      rationale:
        score === 1 ? 'Final answer matches the expected value.' : 'Final answer differs from the expected value.',
      latency_ms: 1,
    },
    {
      judge_id: 'remote-1',
      score: score === 1 ? 1 : (seed % 3) * 0.1,
      rationale: 'Used the calculator correctly; explanation is brief.',
      latency_ms: 800 + (seed % 400),
      dimensions: { correctness: score * 10, tool_use: 8, efficiency: 7 },
    },
  ];
}

export type ChainOutcome = 'solved' | 'retried' | 'intermediate' | 'gave_up';

/**
 * A made-up multi-turn episode on "What is a * b + c?": a two-call chain (a * b, then + c) whose first
 * call may fail (`a x b`, a usage error naming the fix) and be retried. `intermediate` answers with the
 * product (stops after the first observation); `gave_up` answers with a guess after the error.
 */
function demoChain(task: Task, outcome: ChainOutcome, latency = 3): { turns: string[]; steps: TrajectoryStep[] } {
  const [a, b, c] = (task.prompt.match(/\d+/g) ?? ['0', '0', '0']).map(Number);
  const product = a * b;
  const now = Date.now() / 1000;
  const call = (turn: number, thought: string, expression: string, result: string, error: string | null) => ({
    text: `<think>${thought}</think>\n<tool_call>{"name": "calc", "arguments": {"expression": "${expression}"}}</tool_call>`,
    step: {
      step_id: turn,
      turn,
      thought,
      tool_call: { tool_name: 'calc', parameters: { expression }, result, error, latency_ms: latency },
      observation: error ? `Error: ${error}` : result,
      timestamp: now + turn,
    } as TrajectoryStep,
  });
  const usage = 'unexpected character "x" at 4: multiply with *';
  const calls =
    outcome === 'solved'
      ? [call(0, `First the product ${a} * ${b}.`, `${a} * ${b}`, String(product), null)]
      : [
          call(0, `First the product of ${a} and ${b}.`, `${a} x ${b}`, '', usage),
          ...(outcome === 'gave_up'
            ? []
            : [call(1, 'The error says to use * for multiplication.', `${a} * ${b}`, String(product), null)]),
        ];
  if (outcome === 'solved' || outcome === 'retried')
    calls.push(call(calls.length, `Now add ${c} to ${product}.`, `${product} + ${c}`, String(product + c), null));
  const answer =
    outcome === 'gave_up'
      ? `<think>The calculator does not work; I will estimate.</think>\nThe answer is ${product + c + 7}.`
      : outcome === 'intermediate'
        ? `The answer is ${product}.`
        : `<think>The tool says ${product + c}.</think>\nThe answer is ${product + c}.`;
  return { turns: [...calls.map((x) => x.text), answer], steps: calls.map((x) => x.step) };
}

/**
 * Token ids for a demo conversation: one id per character (ASCII, so the byte tokenizer decodes each
 * back), the assistant turns masked in and spanned, as a real rollout stores them.
 */
function withDemoTokens(t: Trajectory): Trajectory {
  const tokens: number[] = [];
  const mask: number[] = [];
  const spans: [number, number][] = [];
  for (const m of t.messages) {
    const ids = [...`${m.role}: ${m.content}\n`].map((ch) => Math.min(255, ch.charCodeAt(0)));
    if (m.role === 'assistant') spans.push([tokens.length, tokens.length + ids.length]);
    tokens.push(...ids);
    mask.push(...ids.map(() => (m.role === 'assistant' ? 1 : 0)));
  }
  return {
    ...t,
    tokens,
    assistant_mask: mask,
    logprobs: mask.map((x) => (x ? -0.7 : 0)),
    turn_spans: spans,
    token_count: tokens.length,
  };
}

const CHAIN_OUTCOMES: ChainOutcome[] = ['solved', 'intermediate', 'retried', 'gave_up'];

/** Groups of four on one task; every other group is a multi-turn chain (see `demoChain`). */
export function demoTrajectory(i: number): Trajectory {
  const group = Math.floor(i / 4);
  if (group % 2 === 1) return demoChainTrajectory(i);
  const envs = ['arith_tool', 'json_extract', 'shell_exec'];
  const env = envs[i % envs.length];
  const task = demoTask(env, 1 + (i % 5), i);
  const wrong = i % 3 === 0;
  const { turns, step } = demoTurns(task, wrong);
  const score = wrong ? 0 : 1;
  const votes = demoVotes(score, i);
  return withDemoTokens({
    id: `demo-${i}`,
    task_id: task.id,
    task_description: task.prompt,
    model_id: 'spindle-micro',
    steps: i % 7 === 0 ? [] : [step],
    final_response: turns[1].split('\n').pop() ?? null,
    success: !wrong,
    judge_score: (votes[0].score! + votes[1].score!) / 2,
    token_count: 60 + (i % 40),
    wall_time_seconds: 1 + (i % 5) * 0.4,
    env,
    split: task.split,
    difficulty: task.difficulty,
    seed: i,
    group_id: `g-${group}`,
    run_id: `run-${1 + (i % 2)}`,
    messages: [
      { role: 'user', content: task.prompt },
      { role: 'assistant', content: turns[0] },
      { role: 'tool', content: step.observation },
      { role: 'assistant', content: turns[1] },
    ],
    tools: [],
    tokens: [],
    assistant_mask: [],
    logprobs: [],
    turn_spans: [],
    finish_reason: 'answer',
    votes,
    sampling: { temperature: 1, top_k: 0, top_p: 1, max_new_tokens: 96 },
    created_at: Date.UTC(2025, 0, 1) + i * 60_000,
  });
}

/** A member of a chain group: the group's shared task, this member's outcome, scored by the rule judge. */
export function demoChainTrajectory(
  i: number,
  task: Task = { ...demoTask('arith_tool', 2, Math.floor(i / 4) * 4 + 1), split: 'train' },
): Trajectory {
  const group = Math.floor(i / 4);
  const outcome = CHAIN_OUTCOMES[i % 4];
  const { turns, steps } = demoChain(task, outcome, 3 + (i % 9));
  const success = outcome === 'solved' || outcome === 'retried';
  const votes = demoVotes(success ? 1 : 0, i);
  const messages: ChatMessage[] = [{ role: 'user', content: task.prompt }];
  turns.forEach((text, t) => {
    messages.push({ role: 'assistant', content: text });
    if (steps[t]) messages.push({ role: 'tool', content: steps[t].observation });
  });
  return withDemoTokens({
    id: `demo-${i}`,
    task_id: task.id,
    task_description: task.prompt,
    model_id: 'spindle-micro',
    steps,
    final_response: turns[turns.length - 1].split('\n').pop() ?? null,
    success,
    judge_score: (votes[0].score! + votes[1].score!) / 2,
    token_count: 0,
    wall_time_seconds: 1 + turns.length * 0.5,
    env: task.env,
    split: task.split,
    difficulty: task.difficulty,
    seed: i,
    group_id: `g-${group}`,
    run_id: `run-${1 + (group % 2)}`,
    messages,
    tools: [],
    tokens: [],
    assistant_mask: [],
    logprobs: [],
    turn_spans: [],
    finish_reason: 'answer',
    votes,
    sampling: { temperature: 1, top_k: 0, top_p: 1, max_new_tokens: 96 },
    created_at: Date.UTC(2025, 0, 1) + i * 60_000,
  });
}
