/** Evaluation results per run, step and benchmark. */
import { write, type Store } from './db.ts';
import type { EvaluationRecord } from './records.ts';
import { newId } from './runs.ts';

export async function putEvaluation(store: Store, e: Omit<EvaluationRecord, 'id' | 'created_at'> & { id?: string; created_at?: number }): Promise<EvaluationRecord> {
  const record: EvaluationRecord = { ...e, id: e.id ?? newId('eval'), created_at: e.created_at ?? Date.now() };
  await write(store, ['evaluations'], `evaluation ${record.benchmark} at step ${record.step}`, async (tx) => { await tx.objectStore('evaluations').put(record); });
  return record;
}

/** A run's evaluations by step. */
export async function listEvaluations(store: Store, runId: string): Promise<EvaluationRecord[]> {
  return store.db.getAllFromIndex('evaluations', 'run_step', IDBKeyRange.bound([runId, -Infinity], [runId, Infinity]));
}
