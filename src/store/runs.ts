/** Runs: config, status and a running summary of the latest metrics. */
import type { EnvironmentSource } from '../contracts.ts';
import type { RunConfig } from '../config/schema.ts';
import { ALL_STORES } from './schema.ts';
import { read, write, type Store } from './db.ts';
import type { RunRecord, RunStatus } from './records.ts';
import { uniqueRunName } from './run-names.ts';

export function newId(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${crypto.randomUUID().slice(0, 8)}`;
}

/**
 * `environments`: the sources of the user environments it uses, kept so it can be resumed and reproduced.
 * `status: 'running'` stores a run that starts now as running from its first write (owned by this process,
 * as setRunStatus does), so one whose page or process goes away while it is still starting is seen as
 * interrupted and offered for resuming, not left 'created' for good. The run is named after its config,
 * with a number added when another run has that name (run-names.ts); its config is kept as given.
 */
export async function createRun(
  store: Store,
  config: RunConfig,
  options: { id?: string; now?: number; environments?: EnvironmentSource[]; status?: 'created' | 'running' } = {},
): Promise<RunRecord> {
  const now = options.now ?? Date.now();
  const status = options.status ?? 'created';
  const run: RunRecord = {
    id: options.id ?? newId('run'),
    name: config.name,
    config,
    status,
    created: now,
    updated: now,
    metrics_summary: {},
    last_step: -1,
    error: null,
    ...(status === 'running' ? { owner: currentProcess() } : {}),
    ...(options.environments?.length ? { environments: options.environments } : {}),
  };
  await write(store, ['runs'], `run ${run.id}`, async (tx) => {
    // Read and written in one transaction, so two runs started at once cannot take the same name.
    const runs = await tx.objectStore('runs').getAll();
    run.name = uniqueRunName(
      config.name,
      runs.map((r) => r.name),
    );
    await tx.objectStore('runs').add(run);
  });
  return run;
}

export async function getRun(store: Store, id: string): Promise<RunRecord | undefined> {
  const run = await store.db.get('runs', id);
  return run && reconcile(store, run);
}

/** All runs, newest first. */
export async function listRuns(store: Store): Promise<RunRecord[]> {
  const runs = (await store.db.getAllFromIndex('runs', 'created')).reverse();
  return Promise.all(runs.map((run) => reconcile(store, run)));
}

export async function setRunStatus(
  store: Store,
  id: string,
  status: RunStatus,
  error: string | null = null,
): Promise<RunRecord> {
  return write(store, ['runs'], `the status of run ${id}`, async (tx) => {
    const runs = tx.objectStore('runs');
    const run = await runs.get(id);
    if (!run) throw new Error(`no run with id ${id}`);
    const owner = status === 'running' ? currentProcess() : (run.owner ?? null);
    const updated = { ...run, status, error, owner, updated: Date.now() };
    await runs.put(updated);
    return updated;
  });
}

/** This OS process, in Node; null in a browser (a tab's runs are guarded by the pipeline's run lock). */
function currentProcess(): { pid: number } | null {
  const pid = (globalThis as { process?: { pid?: number } }).process?.pid;
  return typeof pid === 'number' ? { pid } : null;
}

function processAlive(pid: number): boolean {
  const proc = (globalThis as { process?: { pid: number; kill(pid: number, signal: number): void } }).process;
  if (!proc || pid === proc.pid) return true;
  try {
    proc.kill(pid, 0); // signal 0 only checks that the process exists
    return true;
  } catch (e) {
    return (e as { code?: string }).code === 'EPERM'; // exists, owned by someone else
  }
}

/** A run still marked running whose process is gone was interrupted: record that, so it is not shown running forever. */
async function reconcile(store: Store, run: RunRecord): Promise<RunRecord> {
  if (run.status !== 'running' || !run.owner || processAlive(run.owner.pid)) return run;
  return setRunStatus(
    store,
    run.id,
    'interrupted',
    `the process running it (pid ${run.owner.pid}) exited without finishing it (killed or crashed); resume it from its last checkpoint`,
  );
}

/** Deletes a run and everything it produced (trajectories, groups, metrics, checkpoints, …) in one transaction. */
export async function deleteRun(store: Store, id: string): Promise<void> {
  await write(store, [...ALL_STORES], `the deletion of run ${id}`, async (tx) => {
    await tx.objectStore('runs').delete(id);
    await tx.objectStore('metrics').delete(IDBKeyRange.bound([id, -Infinity], [id, Infinity]));
    await tx.objectStore('checkpoint_heads').delete(id);
    const byRun = [
      tx.objectStore('trajectories').index('run_id'),
      tx.objectStore('groups').index('run_id'),
      tx.objectStore('replay').index('run_id'),
      tx.objectStore('checkpoints').index('run_id'),
      tx.objectStore('evaluations').index('run_id'),
    ];
    for (const index of byRun) {
      for (let c = await index.openKeyCursor(id); c; c = await c.continue())
        await index.objectStore.delete(c.primaryKey);
    }
    const markers = tx.objectStore('markers').index('run_step');
    for (
      let c = await markers.openKeyCursor(IDBKeyRange.bound([id, -Infinity], [id, Infinity]));
      c;
      c = await c.continue()
    ) {
      await markers.objectStore.delete(c.primaryKey);
    }
  });
}

export { read };
