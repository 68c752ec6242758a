/** What the trajectory explorer reads: stored trajectories, paged and filtered, and token detail. */
import type { Trajectory } from '../../../contracts.ts';
import type { TokenPiece } from '../../lib/tokens.ts';
import type { TrajectoryFilter, TrajectoryRow } from '../../../pipeline/app/trajectory-filter.ts';

export interface TokenDetail {
  pieces: TokenPiece[];
  /** What the colour means: "advantage" or "contribution to the last update". */
  label: string;
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
  /** The trajectory's tokens with their values, or null when it has no tokens (remote policy, no tokenizer). */
  tokens(trajectory: Trajectory): Promise<TokenDetail | null>;
}
