/** JSON Lines parsing that reports every bad line by number instead of stopping at the first. */
import { jsonlLines } from '../../jsonl.ts';

export interface LineError {
  line: number;
  message: string;
}

export function parseJsonl<T>(text: string, check: (value: unknown) => string | null): { items: T[]; errors: LineError[] } {
  const items: T[] = [];
  const errors: LineError[] = [];
  for (const { line, value, error } of jsonlLines(text)) {
    const problem = error ?? check(value);
    if (problem) errors.push({ line, message: problem });
    else items.push(value as T);
  }
  return { items, errors };
}
