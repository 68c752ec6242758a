/**
 * Reading a trajectory's final answer: the helpers every environment's `evaluate` shares, so all of
 * them accept the same small variations (surrounding quotes, a trailing period, "The answer is 42.").
 */
import type { Trajectory } from '../contracts.ts';

/** The final answer text, trimmed; '' when the episode ended without one. */
export function finalAnswer(trajectory: Trajectory): string {
  return (trajectory.final_response ?? '').trim();
}

/**
 * The answer as an integer when the whole cleaned answer is one ("42", "Answer: 42.", "The answer is -1,234"),
 * else null. The whole answer is compared, never the last integer in it: "1 2 3 4 5" answers nothing.
 */
export function integerAnswer(text: string): number | null {
  const s = cleanAnswer(text).replace(/^(the answer is|it is|=)\s*/i, '');
  if (!/^-?(\d+|\d{1,3}(,\d{3})+)$/.test(s)) return null;
  const value = Number(s.replace(/,/g, ''));
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
