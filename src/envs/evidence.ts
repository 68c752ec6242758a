/**
 * Evidence that a tool call did the task's work, shared by every environment whose success needs one.
 *
 * A successful call is not enough (a junk `calc("1")` before a guessed answer is a successful call), so a
 * call counts as the work only when (a) it succeeded, (b) its argument mentions the task's inputs
 * (the operands, the text, the file), and (c) its result is the task's answer. A task-blind policy cannot
 * meet (b) without reading the task, nor (c) without computing the answer.
 */
import type { ToolCall, Trajectory } from '../contracts.ts';

/** The calls of a trajectory that ran without an error, in order. */
export function successfulCalls(trajectory: Trajectory, tools: readonly string[]): ToolCall[] {
  return trajectory.steps.flatMap((s) =>
    s.tool_call && s.tool_call.error === null && tools.includes(s.tool_call.tool_name) ? [s.tool_call] : [],
  );
}

/** The text a call ran: calc's expression, js's code, sh/git's command. */
export function callSource(call: ToolCall): string {
  const p = call.parameters;
  const value = p.expression ?? p.code ?? p.command;
  return typeof value === 'string' ? value : '';
}

/** A tool result as a plain value: js results are JSON (`"cba"`, `3`), calc and sh results are text. */
export function resultText(call: ToolCall): string {
  const raw = call.result.trim();
  try {
    const decoded: unknown = JSON.parse(raw);
    if (typeof decoded === 'string') return decoded;
    if (typeof decoded === 'number' || typeof decoded === 'boolean') return String(decoded);
  } catch {
    // Not JSON: calc and sh print plain text.
  }
  return raw;
}

export interface WorkCheck {
  tools: readonly string[];
  /** True when the call's source text works on the task's own inputs. */
  mentions(source: string): boolean;
  /** True when the call's result is the task's answer. */
  result(text: string): boolean;
}

/** True when some successful call read the task's inputs and produced its answer. */
export function toolDidTheWork(trajectory: Trajectory, check: WorkCheck): boolean {
  return successfulCalls(trajectory, check.tools).some(
    (call) => check.mentions(callSource(call)) && check.result(resultText(call)),
  );
}

/** True when `haystack` contains `needle` as a whole token (not inside a longer word or number). */
export function containsToken(haystack: string, needle: string): boolean {
  if (needle === '') return false;
  const escaped = needle.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^\\w./-])${escaped}($|[^\\w/-]|\\.(?!\\w))`).test(haystack);
}

/**
 * The score of a task that needs both a tool doing the work and the right final answer: 1 (success) only
 * with both; half credit for either alone, so a model that computed the answer but mis-copied it, or
 * answered right without the tool, still gets a gradient, and neither counts as success.
 */
export function scoreParts(worked: boolean, answered: boolean): number {
  return (worked ? 0.5 : 0) + (answered ? 0.5 : 0);
}
