/** How a config or task-file message quotes a value: JSON, cut to its first 200 characters (saying how long it was). */

export const SHOWN_CHARS = 200;

export function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    // A BigInt, a cycle, or nesting deeper than the stack (where String() overflows too).
    try {
      text = String(value);
    } catch {
      text = Object.prototype.toString.call(value);
    }
  }
  return clip(text);
}

/** `text`, or its first 200 characters and how long it was. */
export function clip(text: string): string {
  return text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}… (${text.length} characters)` : text;
}
