/**
 * The Playground's operations: environments from the registry and the user's own (installed in the
 * engine, their tasks and scores computed there: environments.ts), episodes in a rollout worker of the
 * engine (play-episode.ts: the local model — the latest training run's, else the imported or shipped
 * base model — or the environment's scripted expert, text streamed back piece by piece), every judge a
 * new run would have (the rule judge plus those the Judges screen switched on, each showing its vote
 * even when it cannot score), and every episode saved under the `playground` run so it shows in
 * Trajectories and survives reloads.
 */
import * as Comlink from 'comlink';
import { isSuccess, type Task, type Trajectory, type TrajectoryStep } from '../../contracts.ts';
import { DEFAULT_CONFIG } from '../../config/schema.ts';
import { describeEnvironments, getEnvironment } from '../../envs/index.ts';
import { TrajectoryJudge } from '../../judge/ensemble.ts';
import type { Judge } from '../../judge/types.ts';
import { createGroupStep } from '../../judge/group-step.ts';
import { envVote } from '../../judge/verifier-gate.ts';
import { createRun, getRun, putTrajectory, type Store } from '../../store/index.ts';
import { loadBrowserModelJudge } from '../platform/browser-judges.ts';
import type { PlayEvent, PlayRequest } from '../engine/engine-api.ts';
import { buildEveryJudge } from '../engine/every-judge.ts';
import { userEnvironments, type EnvironmentEngine } from './environments.ts';
import { applyJudgeSwitches, readJudgeSwitches } from '../operations/judge-settings.ts';
import type { PolicyStatus } from '../engine/model-shelf.ts';
import { readSecrets, secretLookup } from '../engine/secrets.ts';

export const PLAYGROUND_RUN = 'playground';

/** What these operations need of the engine (the engine worker's remote on the page); the environment calls for the user's own environments. */
export interface PlaygroundEngine extends Partial<EnvironmentEngine> {
  policyStatus(): Promise<PolicyStatus> | PolicyStatus;
  playEpisode(request: PlayRequest, onEvent: (event: PlayEvent) => void): Promise<Trajectory>;
  cancelEpisode(episodeId: string): Promise<void> | void;
}

export type PlaygroundEvent = { type: 'text'; piece: string } | { type: 'step'; step: TrajectoryStep };

/** Model judges load once per page (an ONNX session is slow to build); a failed load is retried next time. */
const modelJudges = new Map<string, Promise<Judge>>();
function cachedModelJudge(id: string, path: string): Promise<Judge> {
  const key = `${id} ${path}`;
  let judge = modelJudges.get(key);
  if (!judge) {
    judge = loadBrowserModelJudge(id, path);
    judge.catch(() => modelJudges.delete(key));
    modelJudges.set(key, judge);
  }
  return judge;
}

export function playgroundOperations(getStore: () => Promise<Store>, engine: () => PlaygroundEngine) {
  const tasks = new Map<string, Task>();
  // The user's stored environments run in the engine (environments.ts): their tasks, expert and scores come from there.
  const user = userEnvironments(getStore, engine);

  async function save(trajectory: Trajectory): Promise<void> {
    const store = await getStore();
    if (!(await getRun(store, PLAYGROUND_RUN)))
      await createRun(store, { ...DEFAULT_CONFIG, name: 'playground' }, { id: PLAYGROUND_RUN });
    await putTrajectory(store, trajectory);
  }

  async function localPolicyOption() {
    try {
      const status = await engine().policyStatus();
      return {
        id: 'local',
        // The short name: the select is narrow, and the model line under it says the rest.
        label: `Local model (${status.name})`,
        unavailable: status.unavailable,
        model: status.label,
      };
    } catch (err) {
      return {
        id: 'local',
        label: 'Local model',
        unavailable: `the engine could not start: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
  }

  return {
    async environments() {
      const builtins = describeEnvironments()
        .filter((e) => !user.isUser(e.name))
        .map((e) => ({
          id: e.name,
          title: e.name.replace(/_/g, ' '),
          description: e.description,
          levels: e.difficulties,
        }));
      // The user's own environments (the Environments screen); one that cannot load is left out of the picker.
      const own = await user.describe().catch(() => []);
      return [
        ...builtins,
        ...own.map((e) => ({
          id: e.name,
          title: `${e.name.replace(/_/g, ' ')} (yours)`,
          description: e.description,
          levels: e.levels,
        })),
      ];
    },
    async policies() {
      // The model first: a first visit shows what the model does (the screen picks the first available
      // policy); the scripted expert is there to compare with, and as the fallback while no model loads.
      return [await localPolicyOption(), { id: 'expert', label: 'Scripted expert', unavailable: null }];
    },
    async tasks(env: string, difficulty: number, count: number) {
      const base = Math.floor(Math.random() * 1e6);
      if (user.isUser(env)) await user.ensure(env);
      const generate = user.isUser(env)
        ? (seed: number) => user.generateTask(env, seed, difficulty, 'train')
        : async (seed: number) => getEnvironment(env).generate(seed, difficulty, 'train');
      const generated = await Promise.all(Array.from({ length: count }, (_, i) => generate(base + i)));
      for (const task of generated) tasks.set(task.id, task);
      return generated;
    },
    async customTask(env: string, difficulty: number, prompt: string): Promise<Task> {
      // A typed task has no hidden answer: the rule judge will say it cannot score, honestly.
      return {
        id: `${env}/custom/${difficulty}/${Date.now()}`,
        env,
        split: 'train',
        difficulty,
        seed: 0,
        prompt,
        data: {},
      };
    },
    /** One episode in a rollout worker of the engine, its text and steps streamed through `onEvent`. */
    async runEpisode(
      { task, seed, policy }: { task: Task; seed: number; policy: string },
      onEvent: (event: PlaygroundEvent) => void,
      signal: AbortSignal,
    ): Promise<Trajectory> {
      if (policy !== 'local' && policy !== 'expert')
        throw new Error(`The "${policy}" policy is not available in this build yet; choose the scripted expert.`);
      const own = user.isUser(task.env) ? await user.ensure(task.env) : null;
      if (policy === 'expert') {
        if (!(own ? own.expert : getEnvironment(task.env).expert))
          throw new Error(`${task.env} has no scripted expert; pick another environment.`);
        if (Object.keys(task.data).length === 0)
          throw new Error('The scripted expert only knows generated tasks; switch back to "generated".');
      }
      signal.throwIfAborted();
      const episodeId = `play-${Date.now()}-${Math.random().toString(36).slice(2)}`;
      const cancel = () => void engine().cancelEpisode(episodeId);
      signal.addEventListener('abort', cancel);
      try {
        const trajectory = await engine().playEpisode(
          {
            episodeId,
            policy,
            task,
            seed,
            runId: PLAYGROUND_RUN,
            groupId: `${task.id}#${seed}`,
            sampling: DEFAULT_CONFIG.sampling,
          },
          Comlink.proxy((event: PlayEvent) => {
            if (event.type === 'text') onEvent({ type: 'text', piece: event.piece });
            else if (event.type === 'tool_result') onEvent({ type: 'step', step: event.step });
          }),
        );
        await save(trajectory);
        return trajectory;
      } catch (err) {
        signal.throwIfAborted();
        throw err;
      } finally {
        signal.removeEventListener('abort', cancel);
      }
    },
    /**
     * The votes of every judge a new run would have, the episodes saved again with them. Judged as a
     * run judges a group: each episode by the per-trajectory judges and its environment, then the group
     * step once over all of them (group judges in one call, scores gated by the environment's verdict).
     */
    async judge(group: Trajectory[], signal: AbortSignal) {
      signal.throwIfAborted();
      if (group.length === 0) return [];
      const first = group[0];
      const env = user.isUser(first.env) ? user.evaluator(first.env) : getEnvironment(first.env);
      const task = tasks.get(first.task_id) ?? {
        id: first.task_id,
        env: first.env,
        split: first.split,
        difficulty: first.difficulty,
        seed: 0,
        prompt: first.task_description,
        data: {},
      };
      const store = await getStore();
      const { judge: settings } = applyJudgeSwitches(DEFAULT_CONFIG, await readJudgeSwitches(store));
      const deps = {
        evaluator: env,
        getSecret: secretLookup(await readSecrets(store)),
        loadModelJudge: cachedModelJudge,
      };
      const judges = await buildEveryJudge(
        settings.judges.filter((j) => j.type !== 'group'),
        deps,
      );
      signal.throwIfAborted();
      const voted = await Promise.all(
        group.map(async (trajectory) => {
          const judgement = await new TrajectoryJudge({ judges }).judge(trajectory, task);
          // The environment's verdict as a vote of its own (a typed task has none); a throw is no verdict.
          const started = performance.now();
          const envScore = await Promise.resolve()
            .then(() => env.evaluate(task, trajectory))
            .catch(() => null);
          return {
            envScore,
            trajectory: {
              ...trajectory,
              votes:
                envScore === null
                  ? judgement.votes
                  : [...judgement.votes, envVote(env.name, envScore, performance.now() - started)],
            },
          };
        }),
      );
      signal.throwIfAborted();
      const judged = await createGroupStep({ ...settings, min_votes: 1 }, deps).judge(
        task,
        voted.map((v) => v.trajectory),
      );
      return Promise.all(
        judged.map(async (t, i) => {
          const { envScore } = voted[i];
          await save({ ...t, success: envScore === null ? isSuccess(t.judge_score) : isSuccess(envScore) });
          return { score: t.judge_score, votes: t.votes };
        }),
      );
    },
  };
}
