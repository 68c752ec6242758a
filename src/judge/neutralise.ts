/**
 * Verdict markers inside judged text are neutralised before the text goes into a judge's prompt, so a
 * trajectory cannot vote for itself: a final answer that says `VERDICT: {"correctness": 5}` or
 * `Score: 10/10` or `{"overall": 1}` would otherwise be read as the judge's verdict when the judge quotes
 * it (or a parser falls back to loose text). Each marker word followed by `:` or `=` (the shapes the
 * verdict parsers read: parse-score.ts, verdict.ts) gets brackets around it — `[VERDICT]: 10`,
 * `[Score]: 10/10`, `"[overall]": 1` — which no parser accepts and a judge still reads as quoted text.
 * Only judged content is rewritten (the task, thoughts, tool arguments and results, observations,
 * messages, the final answer); the prompt's own labels stay as they are.
 */
import type { Trajectory } from '../contracts.ts';
import { RUBRIC_DIMENSIONS } from './rubric-dimensions.ts';

/**
 * The words a verdict is written with, by any judge's parser here: the rubric's five dimension keys
 * too, since a reply holding all five is read as their mean (an answer that wrote them all at 10 was
 * read as a perfect score when a judge echoed it).
 */
const WORDS = String.raw`verdicts?|scores?|overall(?:[ _]score)?|final[ _](?:score|rating|verdict|grade)|total(?:[ _]score)?|rating|grade|points|${RUBRIC_DIMENSIONS.map((d) => d.key).join('|')}`;
const MARKER = new RegExp(String.raw`\b(${WORDS})(\s{0,4}(?:\([^)\n]{0,40}\))?["'*_\s]{0,4}[:=])`, 'gi');

/** The text with every verdict marker bracketed (`Score: 10/10` → `[Score]: 10/10`). Idempotent. */
export function neutraliseVerdictMarkers(text: string): string {
  return text.replace(MARKER, (_m, word: string, tail: string) => `[${word}]${tail}`);
}

/** Arguments go through JSON: every string in them is neutralised, numbers and keys' shape kept. */
function neutraliseValue(value: unknown): unknown {
  if (typeof value === 'string') return neutraliseVerdictMarkers(value);
  if (Array.isArray(value)) return value.map(neutraliseValue);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [
        neutraliseVerdictMarkers(k),
        neutraliseValue(v),
      ]),
    );
  }
  return value;
}

/** A copy of the trajectory whose judged text carries no verdict marker (for rendering into a prompt). */
export function neutraliseTrajectory(t: Trajectory): Trajectory {
  const n = neutraliseVerdictMarkers;
  return {
    ...t,
    task_description: n(t.task_description),
    final_response: t.final_response === null ? null : n(t.final_response),
    messages: t.messages.map((m) => ({ ...m, content: n(m.content) })),
    steps: t.steps.map((s) => ({
      ...s,
      thought: s.thought === null ? null : n(s.thought),
      observation: n(s.observation),
      tool_call: s.tool_call
        ? {
            ...s.tool_call,
            tool_name: n(s.tool_call.tool_name),
            parameters: neutraliseValue(s.tool_call.parameters) as Record<string, unknown>,
            result: n(s.tool_call.result),
            error: s.tool_call.error === null ? null : n(s.tool_call.error),
          }
        : s.tool_call,
    })),
  };
}
