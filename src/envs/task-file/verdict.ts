/** What every verifier reads of a task-file row, and what it gives back (verifiers.ts, js-verifier.ts). */

/** A score in [0, 1], or null when the verifier cannot decide; the reason either way. */
export interface Verdict {
  score: number | null;
  reason: string;
}

/** What a verifier reads of a row: its answer and, for `choice`, its choices; a js verifier gets all of it. */
export interface VerifierRow {
  answer: string | number;
  choices?: string[];
  prompt?: string;
  [field: string]: unknown;
}
