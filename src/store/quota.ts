/**
 * Storage headroom: how much the browser lets this origin use, and the request to keep the data
 * from being evicted under storage pressure (`navigator.storage.persist()`).
 */

export interface StorageEstimateInfo {
  usage: number;
  quota: number;
  /** True when the browser promised not to evict this origin's data. */
  persisted: boolean;
}

function storageManager(): StorageManager | undefined {
  return (globalThis.navigator as Navigator | undefined)?.storage;
}

/** Usage and quota in bytes, or null where the browser (or Node) has no StorageManager. */
export async function storageEstimate(): Promise<StorageEstimateInfo | null> {
  const storage = storageManager();
  if (!storage?.estimate) return null;
  const { usage = 0, quota = 0 } = await storage.estimate();
  const persisted = storage.persisted ? await storage.persisted() : false;
  return { usage, quota, persisted };
}

/** Asks the browser to make this origin's storage persistent; true if it is (now or already). */
export async function requestPersistence(): Promise<boolean> {
  const storage = storageManager();
  if (!storage?.persist) return false;
  if (storage.persisted && (await storage.persisted())) return true;
  return storage.persist();
}

export function formatBytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

/** One line for the status strip, e.g. "12.3 MB of 2.0 GB used (persistent)". */
export function describeEstimate(e: StorageEstimateInfo): string {
  return `${formatBytes(e.usage)} of ${formatBytes(e.quota)} used${e.persisted ? ' (persistent)' : ' (may be evicted under storage pressure)'}`;
}
