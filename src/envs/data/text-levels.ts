/**
 * What each difficulty level of the text environments draws. Texts are made of random lowercase
 * "words" (no dictionary), so the item space is effectively unbounded: no test text has a twin in
 * train, and a model cannot memorise answers, only learn to copy the text into a tool call.
 */

export interface TextLevel {
  /** Number of words (inclusive range). */
  words: [number, number];
  /** Letters per word (inclusive range). */
  letters: [number, number];
}

export interface LetterCountLevel extends TextLevel {
  /** The count asked about is drawn uniformly from this range, so no answer is a safe guess. */
  counts: [number, number];
}

export const LETTER_COUNT_LEVELS: Record<number, LetterCountLevel> = {
  1: { words: [1, 1], letters: [4, 7], counts: [0, 3] },
  2: { words: [1, 1], letters: [8, 12], counts: [0, 4] },
  3: { words: [2, 3], letters: [3, 6], counts: [0, 5] },
  4: { words: [4, 6], letters: [3, 6], counts: [0, 6] },
  5: { words: [7, 10], letters: [3, 7], counts: [0, 8] },
};

export const TEXT_REVERSE_LEVELS: Record<number, TextLevel> = {
  1: { words: [1, 1], letters: [3, 6] },
  2: { words: [1, 1], letters: [7, 10] },
  3: { words: [2, 2], letters: [3, 6] },
  4: { words: [3, 4], letters: [3, 6] },
  5: { words: [5, 7], letters: [3, 7] },
};

export const LETTER_COUNT_PROMPTS = [
  "How many times does '{letter}' appear in '{text}'?",
  "Count the letter '{letter}' in '{text}'.",
];
export const TEXT_REVERSE_PROMPTS = ["Reverse '{text}'.", "Write '{text}' backwards."];
