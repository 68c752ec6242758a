/**
 * Storage failures turned into errors a user can act on. IndexedDB reports them as DOMExceptions
 * with terse names (QuotaExceededError, VersionError); these say what happened to the data and what
 * to do next.
 */

/** `locked`: another process writes the file store (store-lock.ts); `io`: anything else, a full disk included. */
export type StoreErrorCode = 'quota' | 'blocked' | 'version' | 'locked' | 'io';

export class StoreError extends Error {
  constructor(
    readonly code: StoreErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StoreError';
  }
}

function errorName(e: unknown): string {
  return (e as { name?: unknown } | null)?.name === undefined ? '' : String((e as { name: unknown }).name);
}

export function isQuotaError(e: unknown): boolean {
  const name = errorName(e);
  // Old Firefox used NS_ERROR_DOM_QUOTA_REACHED; Safari sometimes reports a bare UnknownError on a full disk.
  return name === 'QuotaExceededError' || name === 'NS_ERROR_DOM_QUOTA_REACHED';
}

/** Maps a failure while writing `what` (e.g. "trajectory t-12") to a StoreError. */
export function writeError(e: unknown, what: string): StoreError {
  if (e instanceof StoreError) return e;
  if (isQuotaError(e)) {
    return new StoreError(
      'quota',
      `Browser storage is full: could not save ${what}. Nothing from this save was written (the transaction was rolled back) ` +
        'and everything stored before is intact. Free space by exporting and deleting old runs or trajectories, ' +
        'or allow persistent storage for this site so the browser grants more.',
      { cause: e },
    );
  }
  const detail = e instanceof Error ? e.message : String(e);
  return new StoreError(
    'io',
    `Could not save ${what}: ${detail || errorName(e) || 'unknown storage error'}. Nothing from this save was written.`,
    { cause: e },
  );
}

export function blockedError(oldVersion: number, newVersion: number | null): StoreError {
  return new StoreError(
    'blocked',
    `Spindle's database needs an upgrade (v${oldVersion} → v${newVersion ?? '?'}), but another tab or window still has ` +
      'Spindle open with the older version. Close or reload the other Spindle tabs; the upgrade continues as soon as they ' +
      'let go. Nothing stored is lost.',
  );
}

export function versionError(e: unknown, codeVersion: number): StoreError {
  return new StoreError(
    'version',
    `The stored Spindle data is newer than this page (the code knows database v${codeVersion}): another tab ran a newer ` +
      'Spindle. Reload this page to get the new version. Nothing stored was changed.',
    { cause: e },
  );
}
