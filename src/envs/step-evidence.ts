/**
 * Evidence for tasks that need several dependent steps (file_chain, order_total, func_trace): each
 * piece of work is a "need" that one successful tool call must meet — it names the file it reads and
 * its output shows that file's content, or it computes the answer from what was read — and a need
 * that depends on an earlier one must be met by a LATER call than that one. What a later call needs
 * exists only in an earlier observation (a file name, a price, a function), so a trajectory meets the
 * needs in order only by reading, then acting on what it read; listing every file and reading them all
 * in one call is not the task (it never has to follow anything). One call may meet several needs that do
 * not depend on each other (`cat prices/a.txt prices/b.txt`), but a call that meets a need together with one
 * that depends on it read what no observation had revealed yet, and meets nothing: repeating a
 * read-everything command once per need would otherwise meet every need "in order".
 */
import type { Trajectory } from '../contracts.ts';
import { callSource, resultText } from './evidence.ts';

export interface StepNeed {
  /** Indices of needs (earlier in the list) that must be met by an earlier call than this one. */
  after?: number[];
  /** Tools that may meet it. */
  tools: readonly string[];
  /** True when a successful call with this source and result text meets the need. */
  met(source: string, result: string): boolean;
}

/**
 * A need met by reading a file: the call names the file (by its base name, in any directory spelling:
 * `cat old/plum.txt`, `cat ./old/plum.txt`) and its output shows `shows`.
 */
export function readNeed(path: string, shows: string, after?: number[]): StepNeed {
  return { after, tools: ['sh'], met: (source, result) => namesFile(source, path) && result.includes(shows) };
}

/** True when a command names the file's base name as a whole word or the last part of a path. */
function namesFile(source: string, path: string): boolean {
  const base = path.slice(path.lastIndexOf('/') + 1).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[\\s/'"])${base}($|[\\s'";|&>)])`).test(source);
}

/**
 * The index of the call that meets each need, in order, or null where one is unmet (or met too early).
 * Each need takes the earliest call after its prerequisites that meets it: the earliest choice never
 * blocks a later need, so this finds an order whenever one exists.
 */
function meetNeeds(trajectory: Trajectory, needs: readonly StepNeed[]): (number | null)[] {
  const calls = trajectory.steps.map((s) => s.tool_call);
  const meets = calls.map((call) =>
    call && call.error === null
      ? needs.map((need) => need.tools.includes(call.tool_name) && need.met(callSource(call), resultText(call)))
      : needs.map(() => false),
  );
  const prerequisites = transitivePrerequisites(needs);
  const readsAhead = meets.map((met) => met.some((m, k) => m && prerequisites[k].some((j) => met[j])));
  const at: (number | null)[] = [];
  for (const need of needs) {
    const after = (need.after ?? []).map((i) => at[i]);
    if (after.some((a) => a === null || a === undefined)) {
      at.push(null);
      continue;
    }
    const from = Math.max(-1, ...(after as number[])) + 1;
    let found: number | null = null;
    const k = at.length;
    for (let i = from; i < calls.length && found === null; i++) if (meets[i][k] && !readsAhead[i]) found = i;
    at.push(found);
  }
  return at;
}

/** For each need, every need it depends on, directly or through others (needs list their prerequisites first). */
function transitivePrerequisites(needs: readonly StepNeed[]): number[][] {
  const all: number[][] = [];
  for (const need of needs) all.push([...new Set((need.after ?? []).flatMap((j) => [j, ...(all[j] ?? [])]))]);
  return all;
}

/** True when every need was met in an order its dependencies allow. */
export function allNeedsMet(trajectory: Trajectory, needs: readonly StepNeed[]): boolean {
  return meetNeeds(trajectory, needs).every((i) => i !== null);
}
