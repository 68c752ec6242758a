/** Held-out results as the Train screen keeps them: its own run's, and those of a run it compares with. */

export interface HeldOutResult {
  step: number;
  env: string;
  successes: number;
  n: number;
}

/** A run whose held-out results are drawn beside this run's, and the name its lines are labelled with. */
export interface ComparedRun {
  name: string;
  heldOut: HeldOutResult[];
}
