/**
 * What the base model is trained on: expert transcripts per environment and level. Copy-heavy on
 * purpose: the four starter environments at levels 1–2 carry most of it, because what the model must
 * learn there (carry operands, texts and file names into a call, and the call's result into the answer)
 * is what every environment needs. The long random texts of text_reverse and letter_count at levels 4–5
 * are there for copying itself: 20–50 characters carried four times per transcript teach a small model
 * to copy at all (on levels 1–2 alone its copy accuracy stayed near 20% for 750 steps).
 */
export const TRANSCRIPT_MIX: { env: string; level: number; items: number; copyPractice?: true; multiStep?: true }[] = [
  { env: 'arith_tool', level: 1, items: 3000 },
  { env: 'arith_tool', level: 2, items: 1200 },
  { env: 'arith_tool', level: 3, items: 600 },
  { env: 'letter_count', level: 1, items: 2000 },
  { env: 'letter_count', level: 2, items: 1000 },
  { env: 'letter_count', level: 4, items: 1000 },
  { env: 'text_reverse', level: 1, items: 2000 },
  { env: 'text_reverse', level: 2, items: 1000 },
  { env: 'text_reverse', level: 4, items: 1500, copyPractice: true },
  { env: 'text_reverse', level: 5, items: 1500, copyPractice: true },
  { env: 'shell_exec', level: 1, items: 2500 },
  { env: 'shell_exec', level: 2, items: 1000 },
  { env: 'countdown', level: 1, items: 500 },
  { env: 'git_repo', level: 1, items: 500 },
  { env: 'git_repo', level: 2, items: 300 },
  // Several dependent calls: carry a name, a price or a function from one observation into the next call.
  { env: 'file_chain', level: 1, items: 2000, multiStep: true },
  { env: 'file_chain', level: 2, items: 1200, multiStep: true },
  { env: 'file_chain', level: 3, items: 500, multiStep: true },
  { env: 'order_total', level: 1, items: 2000, multiStep: true },
  { env: 'order_total', level: 2, items: 1200, multiStep: true },
  { env: 'order_total', level: 3, items: 500, multiStep: true },
  { env: 'func_trace', level: 1, items: 2500, multiStep: true },
  { env: 'func_trace', level: 2, items: 1200, multiStep: true },
  { env: 'func_trace', level: 3, items: 400, multiStep: true },
  // Asking a simulated user for what the task leaves out, fixing a repository, and long dependent plans.
  { env: 'clarify_task', level: 1, items: 800, multiStep: true },
  { env: 'clarify_task', level: 2, items: 500, multiStep: true },
  { env: 'repo_fix', level: 1, items: 800, multiStep: true },
  { env: 'repo_fix', level: 2, items: 500, multiStep: true },
  { env: 'long_plan', level: 1, items: 800, multiStep: true },
  { env: 'long_plan', level: 2, items: 400, multiStep: true },
];

/** Longer transcripts are dropped (byte-level: one token per character). */
export const MAX_TRANSCRIPT_TOKENS = 320;
/** The same for the multi-step environments: the model's whole context, less room for a longer answer. */
export const MAX_MULTI_STEP_TOKENS = 1000;

/*
 * No transcript answers without its tool. Earlier builds played a share of the single-step items (20%,
 * then 5%) as a direct answer behind one fixed thought ("I know this."), so that a GRPO group would hold
 * the decision to use the tool; that one thought became the likeliest continuation of `<think>` wherever
 * the prompt did not say which tool to use, and the base answered every question it had never seen with
 * a guess (0% on the held-out tool families, greedy and sampled).
 */

/**
 * The multi-step transcripts fail the way agents fail, in these shares (the rest are the expert's):
 * - `early`: stops after one of its reads and answers with what that observation showed (a file name, a
 *   price, a function), the intermediate value;
 * - `retry`: one call carries a typo in a name it copied (a file path, the function it runs, a universe world's
 *   tool, product, person or counter), the real error follows ("No such file", "'fold' is not defined",
 *   "unknown tool …; available tools: …", "no product named …"), and the next turn makes the call again,
 *   right (typo-retry.ts). These are the base's own commonest failures; before this variant no transcript
 *   showed one fixed, and the base recovered from none of its failed calls, so GRPO had no recovery to reinforce.
 *   The misspelt call itself is left out of the loss (maskTypoTurn): the base learns the fix, not the typo;
 * - `give_up`: on the items built to fail first, answers GIVE_UP_ANSWER right after the failed call.
 * Imitating them, the base sometimes carries on to the end and sometimes stops: sampled success at level 1
 * lands inside the 10–60% band, and what GRPO has to learn is to keep going, and to retry after an error.
 */
export const MULTI_STEP_SHARES = { early: 0.15, retry: 0.2, give_up: 0.2 };
export const GIVE_UP_ANSWER = 'I cannot find it.';

/**
 * The multi-step pass fine-tunes the previous weights rather than training from scratch (a third of the
 * time on 2 cores): on every multi-step transcript and this share of the single-step ones, so what the
 * single-step environments taught stays while most steps teach chaining calls. (With 30% and lr 1e-3 the
 * held-out copy accuracy of letter_count and text_reverse fell from 95–97% to 61–67% in 100 steps.)
 */
export const FINETUNE_SINGLE_STEP_SHARE = 0.5;

/**
 * The procedural universe's share of the mix (`transcripts.ts --universe`): every build family at every
 * level, this many items per level spread over this many worlds, so no tool name or description
 * carries much of it: one item a world. Over 60 worlds (25 items each) the base learned the worlds' names
 * instead of reading them: 0% on new catalog, directory and counters worlds, where it called a counter
 * it had seen ("downloads") for the one the question named. Played as the multi-step rows are (MULTI_STEP_SHARES): the expert, an early stop,
 * a typo fixed on the next turn, a give-up after a designed failure.
 */
export const UNIVERSE_MIX = { worlds: 1500, itemsPerLevel: 1500 };

/**
 * Items per level of the copy drill (universe/copy-drill.ts, with `--universe`): lists of names and
 * letter strings repeated back, about 3% of the build's tokens, so the base learns to copy what it has
 * never seen rather than write a name it memorised.
 */
export const COPY_DRILL_ITEMS = 4000;
