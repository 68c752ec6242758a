/** Drawing the text that letter_count and text_reverse ask about, and quoting it for a `js` call. */
import type { TextLevel } from './data/text-levels.ts';
import type { Rng } from '../rng.ts';

export const ALPHABET = 'abcdefghijklmnopqrstuvwxyz';

/** Random lowercase words joined by single spaces, drawn without the letters in `avoid`. */
export function drawText(rng: Rng, level: TextLevel, avoid = ''): string {
  const letters = [...ALPHABET].filter((c) => !avoid.includes(c));
  const n = rng.int(level.words[0], level.words[1]);
  return Array.from({ length: n }, () =>
    Array.from({ length: rng.int(level.letters[0], level.letters[1]) }, () => rng.pick(letters)).join(''),
  ).join(' ');
}

/** The text with `letter` written over `count` distinct non-space positions (the text must not contain it). */
export function plantLetter(rng: Rng, text: string, letter: string, count: number): string {
  const slots = rng.shuffle([...text].flatMap((c, i) => (c === ' ' ? [] : [i]))).slice(0, count);
  const chars = [...text];
  for (const i of slots) chars[i] = letter;
  return chars.join('');
}

/** A JS string literal for the text (double-quoted, escaped). */
export function jsString(text: string): string {
  return JSON.stringify(text);
}
