/**
 * Remote judges' API keys in the browser: the Judges screen saves each under the setting
 * `secret.<name>`; the engine reads them when a run starts and hands them to its rollout workers
 * (so no worker opens IndexedDB). Never exported, never logged.
 */
import type { Store } from '../../store/index.ts';

export async function readSecrets(store: Store): Promise<Record<string, string>> {
  const rows = await store.db.getAll('settings');
  const secrets: Record<string, string> = {};
  for (const row of rows)
    if (row.key.startsWith('secret.') && typeof row.value === 'string' && row.value) secrets[row.key] = row.value;
  return secrets;
}

/** A run config's `api_key_env` may name the setting (`secret.x`) or just the judge (`x`). */
export function secretLookup(secrets: Record<string, string>): (name: string) => string | null {
  return (name) => secrets[name] ?? secrets[`secret.${name}`] ?? null;
}
