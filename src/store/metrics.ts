/** Per-step metrics (key [run_id, step]) and run markers (curriculum changes, regressions). */
import type { MetricsRecord, RunMarker } from '../contracts.ts';
import { write, type Store } from './db.ts';
import type { MarkerRecord } from './records.ts';

/** Stores the step's metrics and folds them into the run's `metrics_summary`, in one transaction. */
export async function appendMetrics(store: Store, record: MetricsRecord): Promise<void> {
  await write(store, ['metrics', 'runs'], `metrics of step ${record.step} of run ${record.run_id}`, async (tx) => {
    const metrics = tx.objectStore('metrics');
    const old = await metrics.get([record.run_id, record.step]);
    // Several writers (trainer, evaluator) may log the same step: merge, later values win.
    await metrics.put(old ? { ...record, metrics: { ...old.metrics, ...record.metrics } } : record);
    const run = await tx.objectStore('runs').get(record.run_id);
    if (run && record.step >= run.last_step) {
      await tx.objectStore('runs').put({
        ...run,
        last_step: record.step,
        updated: Date.now(),
        metrics_summary: { ...run.metrics_summary, ...record.metrics },
      });
    }
  });
}

export async function listMetrics(
  store: Store,
  runId: string,
  fromStep = -Infinity,
  toStep = Infinity,
): Promise<MetricsRecord[]> {
  return store.db.getAll('metrics', IDBKeyRange.bound([runId, fromStep], [runId, toStep]));
}

export async function addMarker(store: Store, marker: RunMarker): Promise<number> {
  return write(store, ['markers'], `a ${marker.kind} marker of run ${marker.run_id}`, async (tx) =>
    tx.objectStore('markers').add(marker as MarkerRecord),
  );
}

export async function listMarkers(store: Store, runId: string): Promise<RunMarker[]> {
  const records = await store.db.getAllFromIndex(
    'markers',
    'run_step',
    IDBKeyRange.bound([runId, -Infinity], [runId, Infinity]),
  );
  return records.map(({ id: _id, ...marker }) => marker as RunMarker);
}
