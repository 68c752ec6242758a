/**
 * The playground over the real modules: environments from the registry, the agent loop
 * (src/rollout) with either the environment's scripted expert (on this page) or the local model
 * (in the engine worker: the model of the latest training run, else the shipped base model, its
 * text streamed back piece by piece), every judge a new run would have (the rule judge plus those the
 * Judges screen switched on, each showing its vote even when it cannot score), and every episode saved
 * to IndexedDB under the `playground` run so it shows in Trajectories and survives reloads.
 */
import * as Comlink from 'comlink';
import { isSuccess, type Task, type Trajectory } from '../../../contracts.ts';
import { DEFAULT_CONFIG } from '../../../config/schema.ts';
import { describeEnvironments, getEnvironment } from '../../../envs/index.ts';
import { TrajectoryJudge } from '../../../judge/ensemble.ts';
import type { Judge } from '../../../judge/types.ts';
import { loadBrowserModelJudge } from '../../../pipeline/browser-judges.ts';
import { buildEveryJudge } from '../../../pipeline/every-judge.ts';
import { applyJudgeSwitches, readJudgeSwitches } from '../../../pipeline/judge-settings.ts';
import { readSecrets, secretLookup } from '../../../pipeline/secrets.ts';
import { ByteTokenizer } from '../../../model/byte-tokenizer.ts';
import { runEpisode, ScriptedPolicy } from '../../../rollout/index.ts';
import { createRun, getRun, putTrajectory } from '../../../store/index.ts';
import type { PlayEvent } from '../../../pipeline/engine-api.ts';
import type { EpisodeEvent, PlaygroundSource } from '../../screens/playground/source.ts';
import { getEngine } from './engine-client.ts';
import { getStore } from './store-handle.ts';

export const PLAYGROUND_RUN = 'playground';
const tokenizer = new ByteTokenizer();

async function ensurePlaygroundRun(): Promise<void> {
  const store = await getStore();
  if (!(await getRun(store, PLAYGROUND_RUN))) await createRun(store, { ...DEFAULT_CONFIG, name: 'playground' }, { id: PLAYGROUND_RUN });
}

async function save(trajectory: Trajectory): Promise<void> {
  await ensurePlaygroundRun();
  await putTrajectory(await getStore(), trajectory);
}

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

export function createPlaygroundSource(): PlaygroundSource {
  const tasks = new Map<string, Task>();
  return {
    async environments() {
      return describeEnvironments().map((e) => ({ id: e.name, title: e.name.replace(/_/g, ' '), description: e.description, levels: e.difficulties }));
    },
    async policies() {
      // The model first: a first visit shows what the model does (the screen picks the first available
      // policy); the scripted expert is there to compare with, and as the fallback while no model loads.
      return [
        await localPolicyOption(),
        { id: 'expert', label: 'Scripted expert', unavailable: null },
      ];
    },
    async tasks(env, difficulty, count) {
      const environment = getEnvironment(env);
      const base = Math.floor(Math.random() * 1e6);
      return Array.from({ length: count }, (_, i) => {
        const task = environment.generate(base + i, difficulty, 'train');
        tasks.set(task.id, task);
        return task;
      });
    },
    async customTask(env, difficulty, prompt) {
      // A typed task has no hidden answer: the rule judge will say it cannot score, honestly.
      return { id: `${env}/custom/${difficulty}/${Date.now()}`, env, split: 'train', difficulty, seed: 0, prompt, data: {} };
    },
    async runEpisode({ task, seed, policy }, onEvent, signal) {
      if (policy === 'local') return runLocalEpisode(task, seed, onEvent, signal);
      const env = getEnvironment(task.env);
      if (policy !== 'expert') throw new Error(`The "${policy}" policy is not available in this build yet; choose the scripted expert.`);
      if (!env.expert) throw new Error(`${task.env} has no scripted expert; pick another environment.`);
      if (Object.keys(task.data).length === 0) throw new Error('The scripted expert only knows generated tasks; switch back to "generated".');
      const turns = env.expert(task);
      const trajectory = await runEpisode({
        policy: new ScriptedPolicy({ id: 'expert', turns, tokenizer, pieceChars: 3 }),
        env, task, seed, runId: PLAYGROUND_RUN, groupId: `${task.id}#${seed}`, signal,
        onEvent: (e) => {
          if (e.type === 'text') onEvent({ type: 'text', piece: e.piece });
          else if (e.type === 'tool_result') onEvent({ type: 'step', step: e.step });
        },
      });
      await save(trajectory);
      return trajectory;
    },
    async judge(trajectory, signal) {
      signal.throwIfAborted();
      const env = getEnvironment(trajectory.env);
      const task = tasks.get(trajectory.task_id) ?? { id: trajectory.task_id, env: trajectory.env, split: trajectory.split, difficulty: trajectory.difficulty, seed: 0, prompt: trajectory.task_description, data: {} };
      const store = await getStore();
      const configs = applyJudgeSwitches(DEFAULT_CONFIG, await readJudgeSwitches(store)).judge.judges;
      const judges = await buildEveryJudge(configs, { evaluator: env, getSecret: secretLookup(await readSecrets(store)), loadModelJudge: cachedModelJudge });
      signal.throwIfAborted();
      const judgement = await new TrajectoryJudge({ judges }).judge(trajectory, task);
      await save({ ...trajectory, votes: judgement.votes, judge_score: judgement.score, success: isSuccess(judgement.score) });
      return { score: judgement.score, votes: judgement.votes };
    },
  };
}

async function localPolicyOption() {
  const { engine } = getEngine();
  try {
    const status = await engine.policyStatus();
    return { id: 'local', label: `Local model (${status.label})`, unavailable: status.unavailable };
  } catch (err) {
    return { id: 'local', label: 'Local model', unavailable: `the engine could not start: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/** The local policy runs in the engine worker; text and steps stream back through a comlink proxy. */
async function runLocalEpisode(task: Task, seed: number, onEvent: (event: EpisodeEvent) => void, signal: AbortSignal): Promise<Trajectory> {
  signal.throwIfAborted();
  const { engine } = getEngine();
  const episodeId = `play-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const cancel = () => void engine.cancelEpisode(episodeId);
  signal.addEventListener('abort', cancel);
  try {
    const trajectory = await engine.playEpisode(
      { episodeId, task, seed, runId: PLAYGROUND_RUN, groupId: `${task.id}#${seed}`, sampling: DEFAULT_CONFIG.sampling },
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
}
