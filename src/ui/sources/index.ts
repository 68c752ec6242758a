/**
 * The data sources behind each screen. `?demo` gives made-up data (every screen visible without a
 * model or stored runs); otherwise each screen's operations from src/pipeline/app over this page's
 * store, with the engine web worker (real/engine-client.ts) for runs, the playground's episodes, model
 * imports and merged exports. Sources hold no domain logic of their own.
 */
import { environmentOperations } from '../../pipeline/app/environments.ts';
import { judgeOperations } from '../../pipeline/app/judges.ts';
import { lessonRuns, lessonUpdate } from '../../pipeline/app/learn.ts';
import { modelOperations } from '../../pipeline/app/models.ts';
import { pageStore } from '../../pipeline/app/page-store.ts';
import { playgroundOperations } from '../../pipeline/app/playground.ts';
import { trainOperations, withUserEnvironments } from '../../pipeline/app/train.ts';
import { trajectoryOperations } from '../../pipeline/app/trajectories.ts';
import type { AppSources } from './app-sources.ts';
import { createDemoSources } from './demo.ts';
import { engineRunController, getEngine } from './real/engine-client.ts';

function isDemo(): boolean {
  return typeof location !== 'undefined' && new URLSearchParams(location.search).has('demo');
}

export function createAppSources(): AppSources {
  if (isDemo()) return createDemoSources();
  const engine = () => getEngine().engine;
  return {
    playground: playgroundOperations(pageStore, engine),
    // A new run carries the stored sources of the user environments its config names.
    train: {
      controller: withUserEnvironments(
        engineRunController(),
        (config, options) => getEngine().engine.start(config, options),
        pageStore,
      ),
      ...trainOperations(pageStore),
      importedBase: async () => (await engine().importedModel())?.base_model ?? null,
    },
    trajectories: trajectoryOperations(pageStore),
    judges: judgeOperations(pageStore),
    models: modelOperations(pageStore, engine),
    learn: {
      runs: async () => lessonRuns(await pageStore()),
      update: async (runId, step) => lessonUpdate(await pageStore(), runId, step),
    },
    environments: environmentOperations(pageStore, engine),
  };
}
