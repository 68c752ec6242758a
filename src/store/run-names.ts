/**
 * Every run in a store has a name of its own: a new run whose name is taken gets the next free number,
 * "judged-run" → "judged-run 2" → "judged-run 3", so pickers, exports and the CLI's lines tell runs apart
 * by name. Decided here, as the run is written, because the app and the CLI create runs through it alike.
 */
export function uniqueRunName(name: string, taken: Iterable<string>): string {
  const used = new Set(taken);
  const wanted = name.trim() || 'run';
  if (!used.has(wanted)) return wanted;
  // A taken "judged-run 2" continues its own count ("judged-run 3"), never "judged-run 2 2".
  const numbered = /^(.*\S) (\d+)$/.exec(wanted);
  const base = numbered ? numbered[1] : wanted;
  for (let n = numbered ? Number(numbered[2]) + 1 : 2; ; n++) {
    const candidate = `${base} ${n}`;
    if (!used.has(candidate)) return candidate;
  }
}

/**
 * A run as lines name it: its id (what commands take) and beside it its name (what people recognise),
 * "run-3f9c… (judged-run 2)"; the bare id when the run has no name of its own.
 */
export function runLabel(run: { id: string; name: string }): string {
  const name = run.name.trim();
  return name && name !== run.id ? `${run.id} (${name})` : run.id;
}
