/**
 * The screens of the app and their state objects, built once from the data sources (sources/).
 * Each screen's `load()` runs the first time its tab is shown.
 */
import { PlaygroundState } from './screens/playground/playground.svelte.ts';
import { TrainState } from './screens/train/train.svelte.ts';
import { TrajectoriesState } from './screens/trajectories/trajectories.svelte.ts';
import { JudgesState } from './screens/judges/judges.svelte.ts';
import { ModelsState } from './screens/models/models.svelte.ts';
import { LearnState } from './screens/learn/learn.svelte.ts';
import { EnvironmentsState } from './screens/environments/environments.svelte.ts';
import type { AppSources } from './sources/app-sources.ts';
import { createAppSources } from './sources/index.ts';

export const SCREENS = [
  { id: 'playground', label: 'Playground' },
  { id: 'environments', label: 'Environments' },
  { id: 'train', label: 'Train' },
  { id: 'trajectories', label: 'Trajectories' },
  { id: 'judges', label: 'Judges' },
  { id: 'models', label: 'Models & export' },
  { id: 'learn', label: 'Learn' },
] as const;

export type ScreenId = (typeof SCREENS)[number]['id'];

export function createScreens(sources: AppSources = createAppSources()) {
  const screens = {
    playground: new PlaygroundState(sources.playground),
    train: new TrainState(sources.train),
    trajectories: new TrajectoriesState(sources.trajectories),
    judges: new JudgesState(sources.judges),
    models: new ModelsState(sources.models),
    learn: new LearnState(sources.learn),
    environments: new EnvironmentsState(sources.environments),
  };
  // Bookkeeping only; nothing renders from it.
  // eslint-disable-next-line svelte/prefer-svelte-reactivity
  const loaded = new Set<ScreenId>();
  // Environments saved on the Environments screen since a picker was filled: list them, keeping the choices made.
  const refreshPlaygroundEnvironments = async () => {
    screens.playground.environments = await sources.playground
      .environments()
      .catch(() => screens.playground.environments);
  };
  const refreshTrainEnvironments = async () => {
    screens.train.knownEnvironments = await sources.train.environments().catch(() => screens.train.knownEnvironments);
  };
  return {
    ...screens,
    /** Loads a screen's data the first time it is shown; later visits refresh lists that others change. */
    async activate(id: ScreenId): Promise<void> {
      const first = !loaded.has(id);
      loaded.add(id);
      if (first) await screens[id].load();
      else if (id === 'trajectories') await screens.trajectories.refresh();
      else if (id === 'train') await Promise.all([screens.train.syncJudges(), refreshTrainEnvironments()]);
      else if (id === 'models') await screens.models.load();
      else if (id === 'environments') await screens.environments.refresh();
      else if (id === 'playground') await refreshPlaygroundEnvironments();
      else if (id === 'learn') await screens.learn.load();
    },
  };
}
