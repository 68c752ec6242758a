/**
 * The Train screen's reads of the store (the run itself is driven through the engine's RunController):
 * runs left `running` or `paused` by a closed page (and not live in another tab) are offered for
 * resuming, and their stored metrics, markers and held-out results refill the charts.
 */
import type { RunConfig } from '../../config/schema.ts';
import type { EnvironmentSource } from '../../contracts.ts';
import { describeEnvironments } from '../../envs/index.ts';
import type { RunController } from '../operations/events.ts';
import { readJudgeSwitches } from '../operations/judge-settings.ts';
import { liveRunIds, runIsFree } from '../engine/run-lock.ts';
import {
  listEvaluations,
  listMarkers,
  listMetrics,
  listRuns,
  loadLatestCheckpoint,
  type Store,
} from '../../store/index.ts';
import { storedSources, userEnvironments } from './environments.ts';
import { IMPORTED_RUN } from './imported-run.ts';
import { PLAYGROUND_RUN } from './playground.ts';

/** How long a run's lock may stay held after a reload before the run counts as live in another tab. */
const LOCK_GRACE_MS = 8000;

export function trainOperations(getStore: () => Promise<Store>) {
  return {
    /** The built-ins and the user's stored environments (the Environments screen). */
    environments: async () => [
      ...new Set([
        ...describeEnvironments().map((e) => e.name),
        ...(await userEnvironments(getStore, () => ({})).names()),
      ]),
    ],
    async interruptedRuns() {
      const store = await getStore();
      const [runs, live] = await Promise.all([listRuns(store), liveRunIds()]);
      const unfinished = runs.filter(
        (r) => (r.status === 'running' || r.status === 'paused') && r.id !== PLAYGROUND_RUN,
      );
      // A run whose lock is held may belong to the page this one replaced: give that page time to let go.
      const free = await Promise.all(unfinished.map((r) => !live.has(r.id) || runIsFree(r.id, LOCK_GRACE_MS)));
      const shown = unfinished.filter((_, i) => free[i]).sort((a, b) => b.updated - a.updated);
      const checkpoints = await Promise.all(shown.map(async (r) => loadLatestCheckpoint(store, r.id)));
      return shown.map((r, i) => ({
        id: r.id,
        name: r.name,
        status: r.status === 'paused' ? ('paused' as const) : ('running' as const),
        lastStep: r.last_step,
        checkpointStep: checkpoints[i]?.step ?? null,
        maxSteps: r.config.training.max_steps,
        config: r.config,
        updated: r.updated,
      }));
    },
    judgeSwitches: async () => readJudgeSwitches(await getStore()),
    /** Training runs, newest first: the Playground's and the imported adapters' holders are not runs to compare. */
    async runs() {
      const runs = await listRuns(await getStore());
      return runs
        .filter((r) => r.id !== PLAYGROUND_RUN && r.id !== IMPORTED_RUN)
        .map((r) => ({ id: r.id, name: r.name }));
    },
    async history(runId: string) {
      const store = await getStore();
      const [metrics, markers, evaluations] = await Promise.all([
        listMetrics(store, runId),
        listMarkers(store, runId),
        listEvaluations(store, runId),
      ]);
      // Test-split evaluations are stored under the environment's name; validation ones as `<env>/validation`.
      const heldOut = evaluations
        .filter((e) => !e.benchmark.includes('/'))
        .map((e) => ({
          step: e.step,
          env: e.benchmark,
          successes: Math.round(e.results.success * e.results.n),
          n: e.results.n,
        }));
      return { metrics, markers, heldOut };
    },
  };
}

/**
 * `controller` whose new runs carry the stored sources of the user environments their config names
 * (`start` is the engine's, which takes them); a resumed run reinstalls the ones stored with it.
 */
export function withUserEnvironments(
  controller: RunController,
  start: (config: RunConfig, options: { resumeRunId?: string; environments?: EnvironmentSource[] }) => Promise<string>,
  getStore: () => Promise<Store>,
): RunController {
  return {
    ...controller,
    async start(config, options = {}) {
      if (options.resumeRunId) return start(config, options);
      return start(config, {
        ...options,
        environments: await storedSources(await getStore(), config.tasks.environments),
      });
    },
  };
}
