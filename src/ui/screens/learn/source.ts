/** What the lesson reads: the runs with trained updates, and one update's groups as stored episodes. */
import type { LessonRun, LessonUpdate } from '../../../pipeline/app/learn.ts';

export type { LessonGroup, LessonKnobs, LessonRun, LessonSample, LessonUpdate } from '../../../pipeline/app/learn.ts';

/** An update as the lesson holds it: stored, or the built-in example shown before any run exists. */
export interface LessonBatch extends LessonUpdate {
  /** True for the built-in example. */
  example?: boolean;
  /** Made-up ratios π_new/π_old by trajectory id (the example's); stored runs keep none, so theirs are 1. */
  ratios?: Record<string, number>;
}

export interface LearnSource {
  runs(): Promise<LessonRun[]>;
  update(runId: string, step: number): Promise<LessonBatch | null>;
}
