/** What each difficulty level of the text environments draws: which list, how many words. */

export type WordSource = 'short' | 'long' | 'filler';

export interface TextLevel {
  source: WordSource;
  /** Number of words (inclusive range). */
  words: [number, number];
  /** letter_count only: chance that the asked letter does not occur (answer 0). */
  absentLetter: number;
}

export const LETTER_COUNT_LEVELS: Record<number, TextLevel> = {
  1: { source: 'short', words: [1, 1], absentLetter: 0 },
  2: { source: 'long', words: [1, 1], absentLetter: 0 },
  3: { source: 'filler', words: [2, 3], absentLetter: 0.1 },
  4: { source: 'filler', words: [4, 6], absentLetter: 0.15 },
  5: { source: 'filler', words: [7, 10], absentLetter: 0.2 },
};

export const TEXT_REVERSE_LEVELS: Record<number, TextLevel> = {
  1: { source: 'short', words: [1, 1], absentLetter: 0 },
  2: { source: 'long', words: [1, 1], absentLetter: 0 },
  3: { source: 'filler', words: [2, 2], absentLetter: 0 },
  4: { source: 'filler', words: [3, 4], absentLetter: 0 },
  5: { source: 'filler', words: [5, 7], absentLetter: 0 },
};

export const LETTER_COUNT_PROMPTS = ["How many times does '{letter}' appear in '{text}'?", "Count the letter '{letter}' in '{text}'."];
export const TEXT_REVERSE_PROMPTS = ["Reverse '{text}'.", "Write '{text}' backwards."];
