/**
 * What the base model is trained on: expert transcripts per environment and level. Copy-heavy on
 * purpose: the four starter environments at levels 1–2 carry most of it, because what the model must
 * learn there (carry operands, texts and file names into a call, and the call's result into the answer)
 * is what every environment needs.
 */
export const TRANSCRIPT_MIX: { env: string; level: number; items: number }[] = [
  { env: 'arith_tool', level: 1, items: 4000 },
  { env: 'arith_tool', level: 2, items: 1500 },
  { env: 'arith_tool', level: 3, items: 800 },
  { env: 'letter_count', level: 1, items: 3000 },
  { env: 'letter_count', level: 2, items: 1200 },
  { env: 'text_reverse', level: 1, items: 3000 },
  { env: 'text_reverse', level: 2, items: 1200 },
  { env: 'shell_exec', level: 1, items: 3000 },
  { env: 'shell_exec', level: 2, items: 1200 },
  { env: 'countdown', level: 1, items: 600 },
  { env: 'git_repo', level: 1, items: 600 },
  { env: 'git_repo', level: 2, items: 400 },
];

/** Longer transcripts are dropped (byte-level: one token per character). */
export const MAX_TRANSCRIPT_TOKENS = 320;
