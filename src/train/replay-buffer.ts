/**
 * Prioritized replay buffer (`PrioritizedReplayBuffer`) and the online/replay mix.
 *
 * - Admission is on the environment's verdict: a trajectory enters only when it succeeded
 *   (`trajectory.success`, the task was done), and its judge score exceeds `admit_threshold` (a
 *   floor among successes, default 0). A blend of judges that likes a
 *   failed episode never puts it in the buffer. Priority = judge score; an id already held is not added twice.
 * - When full, the lowest-priority item (the oldest among equals) is evicted — unless the newcomer's
 *   priority is not higher, in which case the newcomer is turned away.
 * - Sampling draws with replacement, each draw proportional to priority (Schaul et al. 2016 with
 *   α = 1), from a seeded `Rng` the caller owns (its state goes in the checkpoint).
 * - The whole buffer is plain data (`state()` / `ReplayBuffer.fromState`), for checkpoints and IndexedDB.
 *
 * Pure JS, no tfjs. Sizes are small (10k items), so eviction and sampling scan linearly / binary-search
 * a prefix sum built per `sample` call.
 */
import type { Trajectory } from '../contracts.ts';
import type { RunConfig } from '../config/schema.ts';
import type { Rng } from '../rng.ts';

export interface ReplayItem {
  trajectory: Trajectory;
  priority: number;
  /** Insertion order, for deterministic tie-breaks. */
  seq: number;
}

export interface ReplayState {
  capacity: number;
  admitThreshold: number;
  items: ReplayItem[];
  nextSeq: number;
}

export class ReplayBuffer {
  private items: ReplayItem[];
  private nextSeq: number;
  readonly capacity: number;
  readonly admitThreshold: number;

  constructor(cfg: Pick<RunConfig['replay'], 'capacity' | 'admit_threshold'>) {
    if (!(Number.isInteger(cfg.capacity) && cfg.capacity >= 0)) {
      throw new Error(`replay: capacity ${cfg.capacity} must be a non-negative integer (replay.capacity)`);
    }
    this.capacity = cfg.capacity;
    this.admitThreshold = cfg.admit_threshold;
    this.items = [];
    this.nextSeq = 0;
  }

  static fromState(state: ReplayState): ReplayBuffer {
    const b = new ReplayBuffer({ capacity: state.capacity, admit_threshold: state.admitThreshold });
    b.items = state.items.map((i) => ({ ...i }));
    b.nextSeq = state.nextSeq;
    return b;
  }

  get size(): number {
    return this.items.length;
  }

  /** Priorities currently held, in storage order (for metrics and tests). */
  priorities(): number[] {
    return this.items.map((i) => i.priority);
  }

  /** Admits the trajectory if it succeeded and is scored above the threshold; returns whether it entered. */
  offer(trajectory: Trajectory): boolean {
    const score = trajectory.judge_score;
    if (trajectory.success !== true || score === null || !(score > this.admitThreshold)) return false;
    return this.add(trajectory, score);
  }

  /** Adds with an explicit priority (> 0), evicting the lowest priority when full. */
  add(trajectory: Trajectory, priority: number): boolean {
    if (!(priority > 0 && Number.isFinite(priority)))
      throw new Error(`replay: priority ${priority} must be a positive finite number`);
    if (this.capacity === 0 || this.items.some((i) => i.trajectory.id === trajectory.id)) return false;
    const item: ReplayItem = { trajectory, priority, seq: this.nextSeq++ };
    if (this.items.length < this.capacity) {
      this.items.push(item);
      return true;
    }
    let lowest = 0;
    for (let i = 1; i < this.items.length; i++) {
      const a = this.items[i];
      const b = this.items[lowest];
      if (a.priority < b.priority || (a.priority === b.priority && a.seq < b.seq)) lowest = i;
    }
    if (priority <= this.items[lowest].priority) return false;
    this.items[lowest] = item;
    return true;
  }

  /** `n` draws with replacement, each proportional to priority. Empty when the buffer is empty. */
  sample(n: number, rng: Rng): Trajectory[] {
    if (this.items.length === 0 || n <= 0) return [];
    const cumulative = new Float64Array(this.items.length);
    let total = 0;
    this.items.forEach((it, i) => {
      total += it.priority;
      cumulative[i] = total;
    });
    const out: Trajectory[] = [];
    for (let k = 0; k < n; k++) {
      const u = rng.next() * total;
      let lo = 0;
      let hi = cumulative.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (cumulative[mid] > u) hi = mid;
        else lo = mid + 1;
      }
      out.push(this.items[lo].trajectory);
    }
    return out;
  }

  /** Plain-data snapshot (items are shallow copies; trajectories are shared, never mutated here). */
  state(): ReplayState {
    return {
      capacity: this.capacity,
      admitThreshold: this.admitThreshold,
      items: this.items.map((i) => ({ ...i })),
      nextSeq: this.nextSeq,
    };
  }
}

export interface BatchPlan {
  /** Fresh groups to collect this step. */
  onlineGroups: number;
  /** Trajectories to draw from the replay buffer. */
  replayCount: number;
}

/**
 * The online/replay mix of a step (70/30 by default). `round(batchSize × onlineRatio)` fresh groups run
 * (at least one), and replay adds as many trajectories again as make them `onlineRatio` of the step:
 * at the default batch (4 groups of 8, ratio 0.7) that is 3 groups = 24 online + 10 replayed, 70.6/29.4.
 * While the buffer holds too few, whole fresh groups fill the gap, up to `batchSize` groups.
 */
export function planBatch(p: {
  batchSize: number;
  groupSize: number;
  onlineRatio: number;
  replayAvailable: number;
}): BatchPlan {
  if (!(p.onlineRatio > 0 && p.onlineRatio <= 1))
    throw new Error(`replay: online_ratio ${p.onlineRatio} must lie in (0, 1]`);
  const online = Math.max(1, Math.round(p.batchSize * p.onlineRatio));
  const wanted = Math.round((online * p.groupSize * (1 - p.onlineRatio)) / p.onlineRatio);
  const replayCount = Math.min(wanted, p.replayAvailable);
  const fill = Math.min(Math.max(0, p.batchSize - online), Math.ceil((wanted - replayCount) / p.groupSize));
  return { onlineGroups: online + fill, replayCount };
}
