/** Drawing the text that letter_count and text_reverse ask about, and quoting it for a `js` call. */
import { FILLER_WORDS, LONG_WORDS, SHORT_WORDS } from './data/words.ts';
import type { TextLevel, WordSource } from './data/text-levels.ts';
import type { Rng } from '../rng.ts';

const SOURCES: Record<WordSource, readonly string[]> = { short: SHORT_WORDS, long: LONG_WORDS, filler: FILLER_WORDS };

/** Words joined by single spaces, drawn from the level's list. */
export function drawText(rng: Rng, level: TextLevel): string {
  const n = rng.int(level.words[0], level.words[1]);
  return Array.from({ length: n }, () => rng.pick(SOURCES[level.source])).join(' ');
}

/** A JS string literal for the text (double-quoted, escaped). */
export function jsString(text: string): string {
  return JSON.stringify(text);
}
