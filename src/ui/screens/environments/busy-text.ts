/**
 * What the Environments toolbar says while a check or a save runs. A check reports its parts as lines
 * (one ending in "…" is the part under way), so it reads "Checking: step 3 — the expert at level 2…".
 */
export function checkingText(progress: readonly string[]): string {
  const current = progress.at(-1)?.endsWith('…') ? progress.at(-1)! : null;
  const done = progress.length - (current ? 1 : 0);
  return current ? `Checking: step ${done + 1} — ${current}` : `Checking: ${done} step${done === 1 ? '' : 's'} done…`;
}

export const SAVING_TEXT = 'Saving…';
