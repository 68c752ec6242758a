/**
 * Evaluation results per run, step and benchmark. One record per (run, step, benchmark): its key is made
 * of the three, so an evaluation stored again (a resumed run redoing the evaluations of a step it was
 * killed in the middle of) replaces the first instead of adding a second. The benchmark names the split
 * when it is not test (`arith_tool/validation`).
 */
import { write, type Store } from './db.ts';
import type { EvaluationRecord } from './records.ts';

/** The key of a run's evaluation on `benchmark` at `step`. */
function evaluationId(runId: string, step: number, benchmark: string): string {
  return `eval:${runId}:${step}:${benchmark}`;
}

export async function putEvaluation(
  store: Store,
  e: Omit<EvaluationRecord, 'id' | 'created_at'> & { created_at?: number },
): Promise<EvaluationRecord> {
  const record: EvaluationRecord = {
    ...e,
    id: evaluationId(e.run_id, e.step, e.benchmark),
    created_at: e.created_at ?? Date.now(),
  };
  await write(store, ['evaluations'], `evaluation ${record.benchmark} at step ${record.step}`, async (tx) => {
    await tx.objectStore('evaluations').put(record);
  });
  return record;
}

/** A run's evaluations by step, one per (step, benchmark): where an older store holds one twice (under other keys), the later. */
export async function listEvaluations(store: Store, runId: string): Promise<EvaluationRecord[]> {
  const records = await store.db.getAllFromIndex(
    'evaluations',
    'run_step',
    IDBKeyRange.bound([runId, -Infinity], [runId, Infinity]),
  );
  const latest = new Map<string, EvaluationRecord>();
  for (const r of records) {
    const key = evaluationId(r.run_id, r.step, r.benchmark);
    const seen = latest.get(key);
    if (!seen || r.created_at >= seen.created_at) latest.set(key, r);
  }
  return [...latest.values()]; // the index's order: by step
}
