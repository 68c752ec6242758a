/**
 * What a run picker shows for each run: its name, its id when it has none, and its id after the name
 * when another run has the same name (names are not unique, and two "judged-run" entries cannot be
 * told apart).
 */
export interface NamedRun {
  id: string;
  name?: string | null;
}

export function runLabels(runs: readonly NamedRun[]): string[] {
  const names = runs.map((r) => (r.name ?? '').trim());
  const count = new Map<string, number>();
  for (const n of names) if (n) count.set(n, (count.get(n) ?? 0) + 1);
  return runs.map((r, i) => (!names[i] ? r.id : (count.get(names[i]) ?? 0) > 1 ? `${names[i]} (${r.id})` : names[i]));
}
