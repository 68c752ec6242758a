/**
 * Which runs are live in some tab: the engine holds a Web Lock named after a run while it trains it,
 * so a page that finds a run marked running/paused in IndexedDB can tell an interrupted run (page
 * closed mid-run: offer Resume) from one another tab is training right now.
 */
const runLockName = (runId: string) => `spindle-run:${runId}`;

/** Holds the run's lock until the returned function is called. */
export function lockRun(runId: string): () => void {
  if (typeof navigator === 'undefined' || !navigator.locks) return () => {};
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  void navigator.locks.request(runLockName(runId), () => held);
  return release;
}

/** Names of the run locks held anywhere in this origin now. */
export async function liveRunIds(): Promise<Set<string>> {
  if (typeof navigator === 'undefined' || !navigator.locks) return new Set();
  const { held = [] } = await navigator.locks.query();
  const prefix = runLockName('');
  return new Set(held.flatMap((lock) => (lock.name?.startsWith(prefix) ? [lock.name.slice(prefix.length)] : [])));
}

/**
 * True when the run's lock can be taken within `waitMs`: nobody trains it. A page that was just
 * reloaded can still hold its lock for a moment while its engine worker shuts down, so a held lock
 * is waited for briefly before the run counts as live elsewhere.
 */
export async function runIsFree(runId: string, waitMs: number): Promise<boolean> {
  if (typeof navigator === 'undefined' || !navigator.locks) return true;
  try {
    await navigator.locks.request(runLockName(runId), { signal: AbortSignal.timeout(waitMs) }, () => undefined);
    return true;
  } catch {
    return false;
  }
}
