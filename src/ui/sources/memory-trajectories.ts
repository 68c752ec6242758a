/** A TrajectorySource over an in-memory array: for tests, the demo, and trajectories not yet stored. */
import type { Trajectory } from '../../contracts.ts';
import {
  matchesFilter,
  toRow,
  type TrajectoryFilter,
  type TrajectoryRow,
} from '../../pipeline/app/trajectory-filter.ts';
import { episodeTurns, uncredited, untrainedStatus } from '../../pipeline/app/episode-turns.ts';
import type { TrajectoryDetailData, TrajectorySource } from '../screens/trajectories/source.ts';

/** Without a store there is no group to credit from: the turns, uncredited, and no tokens. */
const uncreditedDetail = (t: Trajectory): TrajectoryDetailData => ({
  turns: episodeTurns(t, uncredited(untrainedStatus(t))),
  tokens: null,
  group: [],
});

export class MemoryTrajectorySource implements TrajectorySource {
  constructor(
    private readonly items: () => Trajectory[],
    private readonly detailOf: (t: Trajectory) => TrajectoryDetailData = uncreditedDetail,
    /** Run names by id, as a store keeps them; a run without one is listed by its id. */
    private readonly runNames: Record<string, string> = {},
  ) {}

  private filtered(filter: TrajectoryFilter): Trajectory[] {
    return this.items()
      .filter((t) => matchesFilter(t, filter))
      .sort((a, b) => b.created_at - a.created_at);
  }

  async facets() {
    const all = this.items();
    return {
      envs: [...new Set(all.map((t) => t.env))].sort(),
      runs: [...new Set(all.map((t) => t.run_id).filter((r): r is string => r !== null))]
        .sort()
        .map((id) => ({ id, name: this.runNames[id] ?? id })),
    };
  }

  async count(filter: TrajectoryFilter): Promise<number> {
    return this.filtered(filter).length;
  }

  async page(filter: TrajectoryFilter, offset: number, limit: number): Promise<TrajectoryRow[]> {
    return this.filtered(filter)
      .slice(offset, offset + limit)
      .map(toRow);
  }

  async get(id: string): Promise<Trajectory | null> {
    return this.items().find((t) => t.id === id) ?? null;
  }

  async detail(t: Trajectory): Promise<TrajectoryDetailData> {
    return this.detailOf(t);
  }
}
