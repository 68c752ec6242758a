/** The numbers the lesson walks through: the latest trained batch of the user's own run. */
import type { CreditWalkthrough } from '../../../pipeline/app/learn.ts';
import type { TokenPiece } from '../../lib/tokens.ts';

export interface LessonSample {
  trajectory_id: string;
  final_response: string | null;
  score: number | null;
  /** Mean probability ratio π_new/π_old over its policy tokens in the update (1 on the first pass). */
  ratio: number | null;
  /** Its tokens tinted by the credit the update put on them (their turn's), or null without tokens. */
  tokens: TokenPiece[] | null;
}

export interface LessonGroup {
  env: string;
  task: string;
  samples: LessonSample[];
  /** One real per-turn credit computation, for the group's sample with the most turns (absent in old batches). */
  credit?: CreditWalkthrough | null;
}

export interface LessonBatch {
  run_id: string;
  step: number;
  groups: LessonGroup[];
  advantage: 'zscore' | 'mean';
  reward_scale: number;
  clip_epsilon: number;
  clip_epsilon_high: number | null;
  /** True for the built-in example shown before any run exists. */
  example?: boolean;
}

export interface LearnSource {
  latest(): Promise<LessonBatch | null>;
  /** Called with each new batch as a run trains; returns an unsubscribe function. */
  subscribe(onBatch: (batch: LessonBatch) => void): () => void;
}
