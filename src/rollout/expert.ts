/**
 * Expert transcripts: an environment's scripted ideal turns played through the real agent loop, so the
 * observations are the sandbox's actual output. Tests use them to prove every item is solvable; the
 * lead uses them to build SFT transcripts (`trajectory.messages` is the HF chat format) for the
 * shipped base model.
 */
import { isSuccess, type Task, type Trajectory } from '../contracts.ts';
import type { Environment } from '../envs/types.ts';
import { runEpisode, type EpisodeOptions } from './episode.ts';
import type { TextTokenizer } from '../tokenizer/tokenizer.ts';
import { ScriptedPolicy } from './scripted-policy.ts';

export interface ExpertOptions extends Partial<Omit<EpisodeOptions, 'policy' | 'env' | 'task'>> {
  /** Builds tokens/assistant mask with this tokenizer (logprobs are placeholders). */
  tokenizer?: TextTokenizer | null;
  /** Plays a variant of the expert's turns (the base-model builder's direct answers: a thought, then the final answer). */
  turns?: (expertTurns: string[]) => string[];
}

/** Runs the environment's expert on a task and scores the result (judge_score/success set). */
export async function expertTrajectory(env: Environment, task: Task, options: ExpertOptions = {}): Promise<Trajectory> {
  if (!env.expert)
    throw new Error(`environment "${env.name}" has no expert; add expert(task) to its spec to get transcripts`);
  const turns = (options.turns ?? ((t) => t))(env.expert(task));
  const policy = new ScriptedPolicy({ id: `expert:${env.name}`, turns, tokenizer: options.tokenizer ?? null });
  const { tokenizer: _t, turns: _v, ...episode } = options;
  const trajectory = await runEpisode({
    seed: task.seed,
    maxSteps: Math.max(turns.length, 1),
    ...episode,
    policy,
    env,
    task,
  });
  const score = await env.evaluate(task, trajectory);
  return { ...trajectory, judge_score: score, success: isSuccess(score) };
}

export interface ExpertBatchOptions extends ExpertOptions {
  /** Levels to draw from; default all the environment offers. */
  difficulties?: readonly number[];
  /** Items per level. */
  perLevel: number;
  /** Default 'train': SFT data must not leak test items. */
  split?: 'train' | 'test';
  /** Item i of a level uses seed baseSeed + i. Default 0. */
  baseSeed?: number;
}

/**
 * Expert transcripts for many items (SFT data for the shipped model): `perLevel` items at each level,
 * each a scored Trajectory whose `messages` are the chat transcript. Items the expert fails (a bug) come
 * back with judge_score below 1, so callers can filter on `success`.
 */
export async function expertTranscripts(env: Environment, options: ExpertBatchOptions): Promise<Trajectory[]> {
  const { difficulties = env.difficulties, perLevel, split = 'train', baseSeed = 0, ...rest } = options;
  const out: Trajectory[] = [];
  for (const level of difficulties) {
    for (let i = 0; i < perLevel; i++)
      out.push(await expertTrajectory(env, env.generate(baseSeed + i, level, split), rest));
  }
  return out;
}
