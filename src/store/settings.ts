/** Key/value settings (UI choices, remote judge endpoints; never secrets in exports). */
import { write, type Store } from './db.ts';

export async function getSetting<T>(store: Store, key: string, fallback: T): Promise<T> {
  const r = await store.db.get('settings', key);
  return r === undefined ? fallback : (r.value as T);
}

export async function setSetting(store: Store, key: string, value: unknown): Promise<void> {
  await write(store, ['settings'], `setting ${key}`, async (tx) => {
    await tx.objectStore('settings').put({ key, value });
  });
}

export async function deleteSetting(store: Store, key: string): Promise<void> {
  await write(store, ['settings'], `the deletion of setting ${key}`, async (tx) => {
    await tx.objectStore('settings').delete(key);
  });
}
