/**
 * How far a run's evaluation has got, from its `evaluation-progress` events: items done of total in the
 * environment being evaluated, which environment of how many, and the time left once an item has
 * finished (the items so far, timed by the page's clock). The Train screen shows it instead of a silent
 * wait, above all before the first update, when the baseline evaluation is all a run is doing.
 */
import { formatDuration } from '../../lib/format.ts';
import type { Split } from '../../../contracts.ts';

export interface EvaluationProgress {
  step: number;
  split: Split;
  env: string;
  done: number;
  total: number;
  /** Position of `env` in the run's environments (0-based), and how many there are. */
  envIndex: number;
  envCount: number;
  /** Items finished in the environments evaluated before this one. */
  doneBefore: number;
  /** When this evaluation's first environment started, by the clock passed in. */
  startedAt: number;
  etaSeconds: number | null;
}

export interface ProgressEvent {
  step: number;
  split: Split;
  env: string;
  done: number;
  total: number;
}

/** The progress after `event`; `envs` are the run's environments in the order it evaluates them, `now` in ms. */
export function advanceEvaluation(
  prev: EvaluationProgress | null,
  event: ProgressEvent,
  envs: readonly string[],
  now: number,
): EvaluationProgress {
  const same = prev !== null && prev.step === event.step && prev.split === event.split;
  const envIndex = Math.max(0, envs.indexOf(event.env));
  const envCount = Math.max(envs.length, envIndex + 1);
  const doneBefore = !same ? 0 : prev.env === event.env ? prev.doneBefore : prev.doneBefore + prev.total;
  const startedAt = same ? prev.startedAt : now;
  const finished = doneBefore + event.done;
  // Environments still to come are assumed to have as many items as this one.
  const remaining = event.total - event.done + event.total * (envCount - envIndex - 1);
  const etaSeconds = finished > 0 ? ((now - startedAt) / 1000 / finished) * remaining : null;
  return { ...event, envIndex, envCount, doneBefore, startedAt, etaSeconds };
}

/** "held-out evaluation before the first update: arith_tool 12/32 items (1 of 2 environments) · about 40 s left". */
export function evaluationText(p: EvaluationProgress): string {
  const what = `${p.split === 'test' ? 'held-out' : p.split} evaluation ${p.step === 0 ? 'before the first update' : `after update ${p.step}`}`;
  const where = p.envCount > 1 ? ` (${p.envIndex + 1} of ${p.envCount} environments)` : '';
  const left = p.etaSeconds === null ? '' : ` · about ${formatDuration(p.etaSeconds)} left`;
  return `${what}: ${p.env} ${p.done}/${p.total} items${where}${left}`;
}
