/** The user's own environments (the Environments screen, `spindle envs add`), kept by name. */
import type { EnvironmentSource } from '../contracts.ts';
import { write, type Store } from './db.ts';
import type { EnvironmentRecord } from './records.ts';

/** Saves `source` under its name, replacing an older version (its creation time is kept); a new source clears the last audit. */
export async function putEnvironment(
  store: Store,
  source: EnvironmentSource,
  auditProblems: string[] | null = null,
): Promise<EnvironmentRecord> {
  return write(store, ['environments'], `environment ${source.name}`, async (tx) => {
    const table = tx.objectStore('environments');
    const old = await table.get(source.name);
    const now = Date.now();
    const record: EnvironmentRecord = {
      name: source.name,
      source,
      created: old?.created ?? now,
      updated: now,
      audit_problems: auditProblems,
    };
    await table.put(record);
    return record;
  });
}

export async function getEnvironmentRecord(store: Store, name: string): Promise<EnvironmentRecord | undefined> {
  return store.db.get('environments', name);
}

/** Every stored environment, by name. */
export async function listEnvironmentRecords(store: Store): Promise<EnvironmentRecord[]> {
  return store.db.getAll('environments');
}

export async function deleteEnvironmentRecord(store: Store, name: string): Promise<void> {
  await write(store, ['environments'], `the deletion of environment ${name}`, async (tx) => {
    await tx.objectStore('environments').delete(name);
  });
}
