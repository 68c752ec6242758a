/** What the trajectory explorer reads: stored trajectories, paged and filtered, and token detail. */
import type { Trajectory } from '../../../contracts.ts';
import type { TokenPiece } from '../../lib/tokens.ts';
import type { TrajectoryFilter, TrajectoryRow } from '../../../pipeline/app/trajectory-filter.ts';
import type { EpisodeTurns } from '../../../pipeline/app/episode-turns.ts';

export interface TokenDetail {
  pieces: TokenPiece[];
  /** What the colour means: "advantage", or why there is none ("not trained yet", "held-out: never trained on"). */
  label: string;
}

/** A sample of the opened trajectory's GRPO group, its turns credited as the trainer credited them. */
export interface GroupMember {
  trajectory: Trajectory;
  turns: EpisodeTurns;
}

/** An opened trajectory's detail: its turns with their credits and where it went wrong, its tokens, its group. */
export interface TrajectoryDetailData {
  turns: EpisodeTurns;
  /** Null when it has no tokens (remote policy, no tokenizer). */
  tokens: TokenDetail | null;
  /** Every sample of its group, it among them; empty when it was sampled alone. */
  group: GroupMember[];
}

/** A run as the screen names it: by its config's name, its id kept for filtering. */
export interface RunLabel {
  id: string;
  name: string;
}

export interface TrajectorySource {
  facets(): Promise<{ envs: string[]; runs: RunLabel[] }>;
  count(filter: TrajectoryFilter): Promise<number>;
  /** Rows `offset … offset + limit` of the filtered list, newest first. */
  page(filter: TrajectoryFilter, offset: number, limit: number): Promise<TrajectoryRow[]>;
  get(id: string): Promise<Trajectory | null>;
  /** Its turns and tokens, with the credit the trainer gave each turn (the same numbers on both). */
  detail(trajectory: Trajectory): Promise<TrajectoryDetailData>;
}
