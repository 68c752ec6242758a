/**
 * Web worker entry of a rollout worker (module worker, spawned by the engine worker): `init` hands it
 * the engine's MessagePort and the judges' keys; then it runs episodes (agent loop, QuickJS sandbox,
 * judges) with a policy whose tokens come from the engine. The logic is src/pipeline/rollout-worker.ts.
 */
import * as Comlink from 'comlink';
import type { RolloutWorkerBoot } from '../src/pipeline/browser.ts';
import type { RemoteGenerator } from '../src/pipeline/generation.ts';
import { createRolloutWorkerApi, type RolloutWorkerApi } from '../src/pipeline/rollout-worker-api.ts';
import { secretLookup } from '../src/pipeline/secrets.ts';

let api: RolloutWorkerApi | null = null;

const boot: RolloutWorkerBoot = {
  init(enginePort, policyId, secrets) {
    api = createRolloutWorkerApi(Comlink.wrap<RemoteGenerator>(enginePort), policyId, { getSecret: secretLookup(secrets) });
  },
  runEpisode(job) {
    if (!api) throw new Error('This rollout worker was asked for an episode before init(); the engine must call init first.');
    return api.runEpisode(job);
  },
};

Comlink.expose(boot);
