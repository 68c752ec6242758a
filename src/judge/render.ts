/**
 * Renders a trajectory as text for judges that read (LLM rubric judges, the in-browser model): the task,
 * each step's thought, tool call, and observation, then the final answer. Long fields are cut in the
 * middle (the start says what was attempted, the end says how it ended) and the whole text has a budget,
 * with the final answer always kept because it matters most to every rubric dimension.
 */
import type { Trajectory, TrajectoryStep } from '../contracts.ts';
import { neutraliseTrajectory, neutraliseVerdictMarkers } from './neutralise.ts';
import { RUBRIC_DIMENSIONS } from './rubric-dimensions.ts';

export interface RenderOptions {
  /** Budget for the whole rendering, in characters. */
  maxChars?: number;
  /** Budget for one field (thought, arguments, observation). */
  maxFieldChars?: number;
  /** Budget for the final answer. */
  maxAnswerChars?: number;
}

const DEFAULTS: Required<RenderOptions> = { maxChars: 12_000, maxFieldChars: 800, maxAnswerChars: 2_000 };

/** Keeps the head and tail of a long text and says how much was dropped. */
export function truncateMiddle(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const marker = ` …[${text.length - maxChars} chars cut]… `;
  const keep = Math.max(0, maxChars - marker.length);
  const head = Math.ceil(keep * 0.6);
  return text.slice(0, head) + marker + text.slice(text.length - (keep - head));
}

function renderStep(step: TrajectoryStep, index: number, fieldChars: number): string {
  const lines = [`Step ${index + 1}:`];
  if (step.thought) lines.push(`  Thought: ${truncateMiddle(step.thought.trim(), fieldChars)}`);
  const call = step.tool_call;
  if (call) {
    const args = safeJson(call.parameters);
    lines.push(`  Tool call: ${call.tool_name || '(no tool name)'}(${truncateMiddle(args, fieldChars)})`);
    if (call.error) lines.push(`  Tool error: ${truncateMiddle(call.error, fieldChars)}`);
  } else {
    lines.push('  Tool call: (none)');
  }
  lines.push(`  Observation: ${truncateMiddle(step.observation.trim(), fieldChars)}`);
  return lines.join('\n');
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'undefined';
  } catch {
    return '[unserialisable arguments]';
  }
}

/**
 * The agent's execution, step by step, then the final answer, within the character budget. Verdict
 * markers in it are neutralised here (neutralise.ts), so no judge's prompt lets a trajectory vote for itself.
 */
export function renderTrajectory(judged: Trajectory, options: RenderOptions = {}): string {
  const trajectory = neutraliseTrajectory(judged);
  const o = { ...DEFAULTS, ...options };
  const answer =
    trajectory.final_response === null || trajectory.final_response.trim() === ''
      ? 'Final answer: (none — the agent gave no final answer)'
      : `Final answer: ${truncateMiddle(trajectory.final_response.trim(), o.maxAnswerChars)}`;
  const ending = `Finished because: ${trajectory.finish_reason}`;
  const steps = trajectory.steps.map((s, i) => renderStep(s, i, o.maxFieldChars));
  if (steps.length === 0) steps.push('(no tool steps)');
  const budget = o.maxChars - answer.length - ending.length - 2;
  // Drop whole middle steps (first and last stay) until the steps fit, then cut what is left.
  let body = steps.join('\n');
  if (body.length > budget && steps.length > 2) {
    const kept = [...steps];
    let dropped = 0;
    while (kept.length > 2 && kept.join('\n').length > budget) {
      kept.splice(1 + Math.floor((kept.length - 2) / 2), 1);
      dropped++;
    }
    const half = Math.ceil(kept.length / 2);
    body = [...kept.slice(0, half), `(… ${dropped} middle steps omitted …)`, ...kept.slice(half)].join('\n');
  }
  body = truncateMiddle(body, Math.max(0, budget));
  return `${body}\n${answer}\n${ending}`;
}

/** The rubric's dimensions, in order, with their JSON keys, are RUBRIC_DIMENSIONS (rubric-dimensions.ts). */

export const RUBRIC_SYSTEM_PROMPT =
  'You are an expert judge of AI agent task executions. You grade strictly and reply with JSON only.';

/** The rubric prompt, in English, asking for a JSON reply that `parseRubricScore` reads. */
export function buildRubricPrompt(trajectory: Trajectory, taskPrompt?: string, options: RenderOptions = {}): string {
  const task = truncateMiddle(
    neutraliseVerdictMarkers((taskPrompt ?? trajectory.task_description).trim()),
    options.maxAnswerChars ?? DEFAULTS.maxAnswerChars,
  );
  const dims = RUBRIC_DIMENSIONS.map((d, i) => `${i + 1}. ${d.label} (${d.key}): ${d.question}`).join('\n');
  const keys = RUBRIC_DIMENSIONS.map((d) => `"${d.key}": <0-10>`).join(', ');
  return [
    'Evaluate how well the following AI agent completed its task.',
    '',
    `Task: ${task}`,
    '',
    'Agent execution trajectory:',
    renderTrajectory(trajectory, options),
    '',
    'Score each dimension from 0 to 10:',
    dims,
    '',
    'Then give an overall score from 0.0 to 1.0.',
    `Reply with one JSON object and nothing else: {${keys}, "overall": <0.0-1.0>, "rationale": "<one or two sentences>"}`,
  ].join('\n');
}
