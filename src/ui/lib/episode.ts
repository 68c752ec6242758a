/** The shape the episode view draws: assistant turns, each with its text and the tool steps it made. */
import { assistantTurns, type AssistantTurn } from '../../pipeline/app/episode-turns.ts';

/** Raw assistant text of a turn (may still be streaming) and its tool steps. */
export type EpisodeTurn = AssistantTurn;

/** Rebuilds the turns of a finished trajectory from its assistant messages and its steps (one definition: the pipeline's). */
export const turnsFromTrajectory = assistantTurns;
