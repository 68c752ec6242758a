/**
 * What the base model is trained on: expert transcripts per environment and level. Copy-heavy on
 * purpose: the four starter environments at levels 1–2 carry most of it, because what the model must
 * learn there (carry operands, texts and file names into a call, and the call's result into the answer)
 * is what every environment needs. The long random texts of text_reverse and letter_count at levels 4–5
 * are there for copying itself: 20–50 characters carried four times per transcript teach a small model
 * to copy at all (on levels 1–2 alone its copy accuracy stayed near 20% for 750 steps).
 */
export const TRANSCRIPT_MIX: { env: string; level: number; items: number }[] = [
  { env: 'arith_tool', level: 1, items: 3000 },
  { env: 'arith_tool', level: 2, items: 1200 },
  { env: 'arith_tool', level: 3, items: 600 },
  { env: 'letter_count', level: 1, items: 2000 },
  { env: 'letter_count', level: 2, items: 1000 },
  { env: 'letter_count', level: 4, items: 1000 },
  { env: 'text_reverse', level: 1, items: 2000 },
  { env: 'text_reverse', level: 2, items: 1000 },
  { env: 'text_reverse', level: 4, items: 1500 },
  { env: 'text_reverse', level: 5, items: 1500 },
  { env: 'shell_exec', level: 1, items: 2500 },
  { env: 'shell_exec', level: 2, items: 1000 },
  { env: 'countdown', level: 1, items: 500 },
  { env: 'git_repo', level: 1, items: 500 },
  { env: 'git_repo', level: 2, items: 300 },
]

/** Longer transcripts are dropped (byte-level: one token per character). */
export const MAX_TRANSCRIPT_TOKENS = 320;
