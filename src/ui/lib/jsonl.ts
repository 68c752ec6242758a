/** JSON Lines parsing that reports every bad line by number instead of stopping at the first. */

export interface LineError {
  line: number;
  message: string;
}

export function parseJsonl<T>(text: string, check: (value: unknown) => string | null): { items: T[]; errors: LineError[] } {
  const items: T[] = [];
  const errors: LineError[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (!line) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      errors.push({ line: index + 1, message: `not valid JSON (${err instanceof Error ? err.message : String(err)})` });
      return;
    }
    const problem = check(value);
    if (problem) errors.push({ line: index + 1, message: problem });
    else items.push(value as T);
  });
  return { items, errors };
}
