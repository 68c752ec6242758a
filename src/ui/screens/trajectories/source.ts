/** What the trajectory explorer reads: stored trajectories, paged and filtered, and token detail. */
import type { Trajectory } from '../../../contracts.ts';
import type { TokenPiece } from '../../lib/tokens.ts';
import type { TrajectoryFilter, TrajectoryRow } from './filter.ts';

export interface TokenDetail {
  pieces: TokenPiece[];
  /** What the colour means: "advantage" or "contribution to the last update". */
  label: string;
}

export interface TrajectorySource {
  facets(): Promise<{ envs: string[]; runs: string[] }>;
  count(filter: TrajectoryFilter): Promise<number>;
  /** Rows `offset … offset + limit` of the filtered list, newest first. */
  page(filter: TrajectoryFilter, offset: number, limit: number): Promise<TrajectoryRow[]>;
  get(id: string): Promise<Trajectory | null>;
  /** The trajectory's tokens with their values, or null when it has no tokens (remote policy, no tokenizer). */
  tokens(trajectory: Trajectory): Promise<TokenDetail | null>;
}
