/**
 * What the playground needs from the rest of Spindle: the environment registry, episodes (the agent
 * loop with the local model or the scripted expert, in a rollout worker) and the judges. The app gives
 * it src/pipeline/app/playground.ts; tests and the demo pass their own.
 */
import type { JudgeVote, Task, Trajectory } from '../../../contracts.ts';
import type { PlaygroundEvent as EpisodeEvent } from '../../../pipeline/app/playground.ts';

export type { EpisodeEvent };

export interface EnvironmentInfo {
  id: string;
  title: string;
  description: string;
  /** Difficulty levels the environment generates. */
  levels: number[];
}

export interface PolicyOption {
  id: string;
  label: string;
  /** Why it cannot be used now (no remote key set, model still loading), or null when it can. */
  unavailable: string | null;
  /** The model it runs, for a policy that loads one (the local model: "the base model (spindle-base)"). */
  model?: string;
}

export interface EpisodeRequest {
  task: Task;
  seed: number;
  policy: string;
}

export interface JudgeResult {
  score: number | null;
  votes: JudgeVote[];
}

export interface PlaygroundSource {
  environments(): Promise<EnvironmentInfo[]>;
  policies(): Promise<PolicyOption[]>;
  /** A few tasks of one environment and level, to pick from. */
  tasks(env: string, difficulty: number, count: number): Promise<Task[]>;
  /** A task from text the user typed, for environments that accept free-form tasks; throws with the reason when not. */
  customTask(env: string, difficulty: number, prompt: string): Promise<Task>;
  /** Runs one episode, streaming text and steps through `onEvent`; rejects with an AbortError when `signal` fires. */
  runEpisode(request: EpisodeRequest, onEvent: (event: EpisodeEvent) => void, signal: AbortSignal): Promise<Trajectory>;
  /**
   * Judges finished episodes of one task as one group (a single episode is a group of one): every judge
   * a new run would have, group judges once over the whole group, as a run's group step does. One result
   * per trajectory, in order.
   */
  judge(group: Trajectory[], signal: AbortSignal): Promise<JudgeResult[]>;
}
