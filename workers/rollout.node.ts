/** Node worker_thread entry of a rollout worker: the same core as the web worker, over comlink's Node adapter. */
import { parentPort, workerData } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { createRolloutWorkerApi } from '../src/pipeline/engine/rollout-worker-api.ts';
import type { RemoteGenerator } from '../src/pipeline/engine/generation.ts';
import { tokenizerFromSpec } from '../src/pipeline/engine/tokenizer-spec.ts';
import { runModulesInThisThread } from '../src/envs/module-host.ts';

// This worker is itself a thread the engine can terminate: user environment modules run here, not in a host of their own.
runModulesInThisThread();

const generator = Comlink.wrap<RemoteGenerator>(nodeEndpoint(workerData.enginePort));
// The run model's tokenizer (null: bytes), so the worker tokenises as the engine samples.
Comlink.expose(
  createRolloutWorkerApi(
    generator,
    workerData.policyId,
    { getSecret: (name) => process.env[name] ?? null },
    tokenizerFromSpec(workerData.tokenizer ?? null),
  ),
  nodeEndpoint(parentPort!),
);
