/** One episode as it streams in, then as finished and judged. Feeds the EpisodeView component. */
import { isSuccess, type JudgeVote, type Task, type Trajectory } from '../../../contracts.ts';
import {
  episodeTurns,
  uncredited,
  type EpisodeTurns,
  type TrajectoryCredit,
} from '../../../pipeline/app/episode-turns.ts';
import type { EpisodeTurn } from '../../lib/episode.ts';
import { turnsFromTrajectory } from '../../lib/episode.ts';
import type { EpisodeEvent } from './source.ts';

export type EpisodePhase = 'running' | 'judging' | 'done' | 'error' | 'cancelled';

export class LiveEpisode {
  phase = $state<EpisodePhase>('running');
  turns = $state<EpisodeTurn[]>([{ text: '', steps: [] }]);
  trajectory = $state<Trajectory | null>(null);
  votes = $state<JudgeVote[]>([]);
  score = $state<number | null>(null);
  error = $state<string | null>(null);
  judgeError = $state<string | null>(null);

  constructor(
    readonly task: Task,
    readonly seed: number,
  ) {}

  readonly streaming = $derived(this.phase === 'running');

  /** A new turn starts whenever text arrives after the last turn's tool steps. */
  onEvent = (event: EpisodeEvent): void => {
    const last = this.turns[this.turns.length - 1];
    if (event.type === 'text') {
      if (last.steps.length > 0) this.turns.push({ text: event.piece, steps: [] });
      else last.text += event.piece;
    } else {
      while (this.turns.length <= event.step.turn) this.turns.push({ text: '', steps: [] });
      this.turns[event.step.turn].steps.push(event.step);
    }
  };

  /** The trajectory as judged here (the source saves the score; the returned trajectory predates it). */
  readonly judged = $derived(
    this.trajectory && this.phase === 'done'
      ? { ...this.trajectory, judge_score: this.score, success: isSuccess(this.score) }
      : this.trajectory,
  );

  /** The finished episode as turns, with where it went wrong and, given its sampled group's `credit`, each turn's credit. */
  annotated(credit: TrajectoryCredit | null): EpisodeTurns | null {
    return this.judged ? episodeTurns(this.judged, credit ?? uncredited('not_trained')) : null;
  }

  finish(trajectory: Trajectory): void {
    this.trajectory = trajectory;
    // The stored trajectory is the truth; it replaces what was pieced together from the stream.
    this.turns = turnsFromTrajectory(trajectory);
    this.phase = 'judging';
  }
}
