/** Node worker_thread entry of a rollout worker: the same core as the web worker, over comlink's Node adapter. */
import { parentPort, workerData } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { createRolloutWorkerApi } from '../src/pipeline/rollout-worker-api.ts';
import type { RemoteGenerator } from '../src/pipeline/generation.ts';

const generator = Comlink.wrap<RemoteGenerator>(nodeEndpoint(workerData.enginePort));
Comlink.expose(createRolloutWorkerApi(generator, workerData.policyId, { getSecret: (name) => process.env[name] ?? null }), nodeEndpoint(parentPort!));
