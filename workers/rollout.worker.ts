/**
 * Web worker entry of a rollout worker (module worker, spawned by the engine worker): `init` hands it
 * the engine's MessagePort, the judges' keys and the run model's tokenizer; `configure` the run's settings
 * and user environments, once; then it runs episodes (agent loop, QuickJS sandbox, judges) with a policy
 * whose tokens come from the engine. The logic is src/pipeline/engine/rollout-worker.ts.
 *
 * The in-browser ONNX judge (a run's `{type: 'model', path: 'models/judge'}`) loads from the app's own
 * assets (src/pipeline/platform/browser-judges.ts); onnxruntime-web is imported only when a run has a model judge.
 */
import * as Comlink from 'comlink';
import type { RolloutWorkerBoot } from '../src/pipeline/platform/browser.ts';
import { loadBrowserModelJudge as loadModelJudge } from '../src/pipeline/platform/browser-judges.ts';
import type { RemoteGenerator } from '../src/pipeline/engine/generation.ts';
import { createRolloutWorkerApi, type RolloutWorkerApi } from '../src/pipeline/engine/rollout-worker-api.ts';
import { secretLookup } from '../src/pipeline/engine/secrets.ts';
import { tokenizerFromSpec } from '../src/pipeline/engine/tokenizer-spec.ts';
import { runModulesInThisThread } from '../src/envs/module-host.ts';

// This worker is itself a thread the engine can terminate: user environment modules run here, not in a host of their own.
runModulesInThisThread();

let api: RolloutWorkerApi | null = null;

function started(): RolloutWorkerApi {
  if (!api) throw new Error('This rollout worker was called before init(); the engine must call init first.');
  return api;
}

const boot: RolloutWorkerBoot = {
  init(enginePort, policyId, secrets, tokenizer) {
    api = createRolloutWorkerApi(
      Comlink.wrap<RemoteGenerator>(enginePort),
      policyId,
      { getSecret: secretLookup(secrets), loadModelJudge },
      tokenizerFromSpec(tokenizer),
    );
  },
  configure(settings) {
    return started().configure(settings);
  },
  runEpisode(job, onEvent) {
    return started().runEpisode(job, onEvent);
  },
};

Comlink.expose(boot);
