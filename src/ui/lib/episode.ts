/** The shape the episode view draws: assistant turns, each with its text and the tool steps it made. */
import type { Trajectory, TrajectoryStep } from '../../contracts.ts';

export interface EpisodeTurn {
  /** Raw assistant text of the turn (may still be streaming). */
  text: string;
  steps: TrajectoryStep[];
}

/** Rebuilds the turns of a finished trajectory from its assistant messages and its steps. */
export function turnsFromTrajectory(trajectory: Trajectory): EpisodeTurn[] {
  const turns: EpisodeTurn[] = trajectory.messages.filter((m) => m.role === 'assistant').map((m) => ({ text: m.content, steps: [] }));
  for (const step of trajectory.steps) {
    while (turns.length <= step.turn) turns.push({ text: '', steps: [] });
    turns[step.turn].steps.push(step);
  }
  return turns;
}
