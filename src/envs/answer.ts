/**
 * Reading a trajectory's final answer: the helpers every environment's `evaluate` shares, so all of
 * them accept the same small variations (surrounding quotes, a trailing period, "The answer is 42.").
 */
import type { Trajectory } from '../contracts.ts';

/** The final answer text, trimmed; '' when the episode ended without one. */
export function finalAnswer(trajectory: Trajectory): string {
  return (trajectory.final_response ?? '').trim();
}

/** The last integer in a text ("-1,234" → -1234), or null when there is none. */
export function lastInteger(text: string): number | null {
  const matches = text.match(/-?\d[\d,]*/g);
  if (!matches) return null;
  const value = Number(matches[matches.length - 1].replace(/,/g, ''));
  return Number.isSafeInteger(value) ? value : null;
}

/** An answer with wrapping quotes/backticks, an "Answer:" label and a trailing period removed. */
export function cleanAnswer(text: string): string {
  let s = text.trim().replace(/^(final answer|answer)\s*[:=]\s*/i, '');
  s = s.replace(/[.。]$/, '').trim();
  const wrapped = s.match(/^(["'`])([\s\S]*)\1$/);
  return wrapped ? wrapped[2] : s;
}

/** Code from the last fenced block (```js … ```), or the whole text when there is no fence. */
export function extractCode(text: string): string {
  const fences = [...text.matchAll(/```[a-zA-Z]*\n?([\s\S]*?)```/g)];
  return fences.length ? fences[fences.length - 1][1].trim() : text.trim();
}

/** True when some step called one of these tools without an error. */
export function usedToolSuccessfully(trajectory: Trajectory, tools: readonly string[]): boolean {
  return trajectory.steps.some((s) => s.tool_call !== null && s.tool_call.error === null && tools.includes(s.tool_call.tool_name));
}
