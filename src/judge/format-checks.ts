/**
 * Format checks a rule judge adds to the environment's verdict: every `<tool_call>` body is well-formed
 * JSON naming a tool, a final answer is present, and every `<think>` is closed. They read the raw
 * assistant messages (what the policy actually wrote) as well as the parsed steps.
 */
import type { Trajectory } from '../contracts.ts';

export const FORMAT_CHECKS = ['tool_call_json', 'final_answer', 'think_closed'] as const;
export type FormatCheckName = (typeof FORMAT_CHECKS)[number];

export interface FormatCheckResult {
  check: FormatCheckName;
  passed: boolean;
  /** What failed, for the rationale; empty when passed. */
  detail: string;
}

const TOOL_CALL_BLOCK = /<tool_call>([\s\S]*?)(<\/tool_call>|$)/g;

function assistantTexts(trajectory: Trajectory): string[] {
  return trajectory.messages.filter((m) => m.role === 'assistant').map((m) => m.content);
}

function checkToolCallJson(trajectory: Trajectory): FormatCheckResult {
  const problems: string[] = [];
  assistantTexts(trajectory).forEach((text, turn) => {
    for (const match of text.matchAll(TOOL_CALL_BLOCK)) {
      if (match[0] === '') continue;
      if (match[2] !== '</tool_call>') {
        problems.push(`turn ${turn}: unterminated <tool_call>`);
        continue;
      }
      try {
        const call = JSON.parse(match[1].trim()) as unknown;
        const name = typeof call === 'object' && call !== null ? (call as { name?: unknown }).name : undefined;
        if (typeof name !== 'string' || name === '') problems.push(`turn ${turn}: tool call has no "name"`);
      } catch {
        problems.push(`turn ${turn}: tool call is not valid JSON`);
      }
    }
  });
  for (const step of trajectory.steps) {
    if (step.tool_call && step.tool_call.tool_name === '')
      problems.push(`step ${step.step_id}: tool call could not be parsed`);
  }
  return { check: 'tool_call_json', passed: problems.length === 0, detail: problems.slice(0, 3).join('; ') };
}

function checkFinalAnswer(trajectory: Trajectory): FormatCheckResult {
  const passed = trajectory.final_response !== null && trajectory.final_response.trim() !== '';
  return { check: 'final_answer', passed, detail: passed ? '' : 'no final answer' };
}

function checkThinkClosed(trajectory: Trajectory): FormatCheckResult {
  const problems: string[] = [];
  assistantTexts(trajectory).forEach((text, turn) => {
    const opens = text.match(/<think>/g)?.length ?? 0;
    const closes = text.match(/<\/think>/g)?.length ?? 0;
    if (opens !== closes) problems.push(`turn ${turn}: ${opens} <think> vs ${closes} </think>`);
  });
  return { check: 'think_closed', passed: problems.length === 0, detail: problems.slice(0, 3).join('; ') };
}

const RUNNERS: Record<FormatCheckName, (t: Trajectory) => FormatCheckResult> = {
  tool_call_json: checkToolCallJson,
  final_answer: checkFinalAnswer,
  think_closed: checkThinkClosed,
};

export function runFormatChecks(
  trajectory: Trajectory,
  checks: readonly FormatCheckName[] = FORMAT_CHECKS,
): FormatCheckResult[] {
  return checks.map((c) => RUNNERS[c](trajectory));
}
