/**
 * The difficulty curriculum (`TaskCurriculum`): each environment starts at
 * `start_level` and moves up one level when the mean of its last `window` scores exceeds
 * `advance_threshold` (strictly: a mean equal to it does not advance), up to `max_level` (5).
 *
 * Pure state + events, no tfjs: the state is plain data (saved in checkpoints); `recordScores`
 * returns a new state and the level changes, which the trainer logs as `curriculum` run markers.
 *
 * The trainer records successes (1 when the environment says the task was done, else 0), so the
 * threshold is a success rate, not a mean judge score, which partial credit would inflate.
 *
 * A level never advances before a full window of scores, so the mean is always over `window` of
 * them. After advancing, the window starts empty, so scores earned on the easier level do not count
 * toward the next one. Levels never go down.
 */
import type { RunConfig } from '../config/schema.ts';

export type CurriculumConfig = Pick<
  RunConfig['curriculum'],
  'start_level' | 'window' | 'advance_threshold' | 'max_level'
>;

/**
 * The level one group of an environment is drawn at: its current `level`, or with probability
 * `next_level_share` (`draw` is a uniform number in [0, 1) the caller derives from the run's seed, the step
 * and the group, so a rerun draws the same) the level above, up to `top` (max_level and the run's range).
 */
export function groupLevel(level: number, share: number, draw: number, top: number): number {
  return share > 0 && draw < share && level < top ? level + 1 : level;
}

export interface EnvCurriculum {
  level: number;
  /** The most recent scores at this level, oldest first, at most `window` long. */
  recent: number[];
}

export interface CurriculumState {
  envs: Record<string, EnvCurriculum>;
}

export interface LevelChange {
  env: string;
  from: number;
  to: number;
  /** Mean of the window that triggered the change. */
  windowMean: number;
}

export function createCurriculum(envs: readonly string[], cfg: CurriculumConfig): CurriculumState {
  if (!(cfg.start_level >= 1 && cfg.start_level <= cfg.max_level)) {
    throw new Error(`curriculum: start_level ${cfg.start_level} must lie in [1, max_level=${cfg.max_level}]`);
  }
  if (!(Number.isInteger(cfg.window) && cfg.window >= 1))
    throw new Error(`curriculum: window ${cfg.window} must be a positive integer`);
  return { envs: Object.fromEntries(envs.map((e) => [e, { level: cfg.start_level, recent: [] }])) };
}

/** The difficulty the environment should generate now (start_level for an environment not seen yet). */
export function levelOf(state: CurriculumState, env: string, cfg: CurriculumConfig): number {
  return state.envs[env]?.level ?? cfg.start_level;
}

/** Adds scores (in order) for one environment; may advance one or more levels. */
export function recordScores(
  state: CurriculumState,
  env: string,
  scores: readonly number[],
  cfg: CurriculumConfig,
): { state: CurriculumState; changes: LevelChange[] } {
  let cur: EnvCurriculum = state.envs[env] ?? { level: cfg.start_level, recent: [] };
  cur = { level: cur.level, recent: cur.recent.slice() };
  const changes: LevelChange[] = [];
  for (const s of scores) {
    cur.recent.push(s);
    if (cur.recent.length > cfg.window) cur.recent.shift();
    if (cur.level >= cfg.max_level || cur.recent.length < cfg.window) continue;
    const windowMean = cur.recent.reduce((a, b) => a + b, 0) / cur.recent.length;
    if (windowMean > cfg.advance_threshold) {
      changes.push({ env, from: cur.level, to: cur.level + 1, windowMean });
      cur = { level: cur.level + 1, recent: [] };
    }
  }
  return { state: { envs: { ...state.envs, [env]: cur } }, changes };
}
