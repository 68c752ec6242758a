/**
 * Trajectory filters and list rows, as pure functions, so any source (IndexedDB scan, an in-memory
 * array in tests) filters the same way.
 */
import type { Split, Trajectory } from '../../contracts.ts';
import { verifierDisagrees } from '../../judge/verifier-gate.ts';

/** Whether a judge's vote fell outside the environment's verdict (the verifier gate moved it); for the vote views. */
export { verifierDisagrees };

export interface TrajectoryFilter {
  env: string | null;
  split: Split | null;
  runId: string | null;
  minScore: number | null;
  maxScore: number | null;
  minSteps: number | null;
  maxSteps: number | null;
  /** Keep only trajectories whose judges disagree by at least this much (max − min score). */
  minDisagreement: number | null;
  /** Case-insensitive text in the task, the final answer or the messages. */
  search: string;
}

export const EMPTY_FILTER: TrajectoryFilter = {
  env: null,
  split: null,
  runId: null,
  minScore: null,
  maxScore: null,
  minSteps: null,
  maxSteps: null,
  minDisagreement: null,
  search: '',
};

export interface TrajectoryRow {
  id: string;
  env: string;
  split: Split;
  difficulty: number;
  runId: string | null;
  task: string;
  score: number | null;
  success: boolean | null;
  steps: number;
  /** Max − min over the judges that scored; null with fewer than two scores. */
  disagreement: number | null;
  /** A judge and the environment's verifier disagree (`verifierDisagrees`). */
  verifierDisagrees: boolean;
  finishReason: Trajectory['finish_reason'];
  createdAt: number;
}

function voteSpread(t: Pick<Trajectory, 'votes'>): number | null {
  const scores = t.votes.map((v) => v.score).filter((s): s is number => s !== null);
  return scores.length < 2 ? null : Math.max(...scores) - Math.min(...scores);
}

export function toRow(t: Trajectory): TrajectoryRow {
  return {
    id: t.id,
    env: t.env,
    split: t.split,
    difficulty: t.difficulty,
    runId: t.run_id,
    task: t.task_description,
    score: t.judge_score,
    success: t.success,
    steps: t.steps.length,
    disagreement: voteSpread(t),
    verifierDisagrees: verifierDisagrees(t.votes),
    finishReason: t.finish_reason,
    createdAt: t.created_at,
  };
}

export function matchesFilter(t: Trajectory, f: TrajectoryFilter): boolean {
  if (f.env && t.env !== f.env) return false;
  if (f.split && t.split !== f.split) return false;
  if (f.runId && t.run_id !== f.runId) return false;
  if (f.minScore !== null && (t.judge_score === null || t.judge_score < f.minScore)) return false;
  if (f.maxScore !== null && (t.judge_score === null || t.judge_score > f.maxScore)) return false;
  if (f.minSteps !== null && t.steps.length < f.minSteps) return false;
  if (f.maxSteps !== null && t.steps.length > f.maxSteps) return false;
  if (f.minDisagreement !== null && (voteSpread(t) ?? -1) < f.minDisagreement) return false;
  const q = f.search.trim().toLowerCase();
  if (q) {
    const haystack = [t.task_description, t.final_response ?? '', ...t.messages.map((m) => m.content)]
      .join('\n')
      .toLowerCase();
    if (!haystack.includes(q)) return false;
  }
  return true;
}
